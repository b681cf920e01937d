import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase } from '../../test/infra.ts';
import { createPostgresStore } from './src/index.ts';

const database = await createTestDatabase('postgres://postgres@127.0.0.1:5432/postgres');
const admin = new pg.Pool({ connectionString: database.url, max: 2 });
const s0 = createPostgresStore({ pool: admin });
await s0.migrate();
await admin.query(
  `CREATE TABLE raw_chunks (id uuid PRIMARY KEY, tab_id uuid NOT NULL, seq bigint NOT NULL, turn_id uuid NOT NULL, step integer NOT NULL, role text NOT NULL, type text NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
);
const t = await s0.createTenant({ name: 'b' });
const tabs = (
  await admin.query(
    `INSERT INTO tabs (tenant_id) SELECT $1 FROM generate_series(1,1000) RETURNING id`,
    [t.id],
  )
).rows.map((r) => r.id);
const payload = JSON.stringify({ text: 'x'.repeat(200) });
async function rate(n, op) {
  await Promise.all(Array.from({ length: n }, op));
  let c = 0;
  const s = performance.now();
  const d = s + 2000;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (performance.now() < d) {
        await op();
        c++;
      }
    }),
  );
  return Math.round(c / ((performance.now() - s) / 1000));
}
const pick = () => tabs[Math.floor(Math.random() * tabs.length)];
const variants = {
  funcOnly: (p) => {
    const tab = pick();
    return p.query({
      name: 'f',
      text: 'SELECT * FROM chunklog_append($1, $2::jsonb, $3)',
      values: [
        tab,
        `[{"id":"${randomUUID()}","turnId":"${randomUUID()}","step":0,"role":"user","type":"text","data":${payload}}]`,
        null,
      ],
    });
  },
  raw: (p) =>
    p.query({
      name: 'r',
      text: 'INSERT INTO raw_chunks (id, tab_id, seq, turn_id, step, role, type, data) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)',
      values: [randomUUID(), pick(), 1, randomUUID(), 0, 'user', 'text', payload],
    }),
  chunksDirect: (p) =>
    p.query({
      name: 'c',
      text: 'INSERT INTO chunks (id, tab_id, seq, turn_id, step, role, type, data) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)',
      values: [
        randomUUID(),
        pick(),
        Math.floor(Math.random() * 1e12),
        randomUUID(),
        0,
        'user',
        'text',
        payload,
      ],
    }),
};
for (const n of [8, 32]) {
  const p = new pg.Pool({ connectionString: database.url, max: n });
  const out = {};
  for (const [k, op] of Object.entries(variants)) out[k] = await rate(n, () => op(p));
  for (const [k, op] of Object.entries(variants)) out[k + '2'] = await rate(n, () => op(p));
  console.log(n, JSON.stringify(out));
  await p.end();
}
await admin.end();
await database.drop();
