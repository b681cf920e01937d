/**
 * Postgres chunk store figures, on the real Postgres (BENCH_DATABASE_URL, TEST_DATABASE_URL or
 * the local server) in a throwaway database, everything in one run:
 * - store.append.*: single-chunk appends through the store (validation, then one round trip:
 *   advisory lock, tail read, insert) against raw single-row INSERTs of the same payload into
 *   a plain table (primary key only), at 8 and 32 connections spread over 1,000 tabs, and at 8
 *   connections on one hot tab. Short raw and store phases alternate so outside load on the
 *   machine hits both alike. Ratio = store rows/s ÷ raw rows/s (goal ≥ 0.8), the median over
 *   rounds of each round's ratio; the rows/s figures are medians too.
 * - store.page.*: page read latency (50 chunks, 2,000 samples each, alternating) on a
 *   1,000,000-chunk tab at the head and 900,000 chunks back (goal: deep p99 ≤ 1.2 × head p99).
 */
import { randomUUID } from 'node:crypto';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import { createTestDatabase } from '@chunklog/test-infra';
import pg from 'pg';
import { loadDeepTab } from '../test/load-deep-tab';
import { percentile } from './percentile';

const adminUrl =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

// Short alternating phases: outside load on a shared machine changes over seconds, so adjacent
// raw and store phases see nearly the same conditions.
const phaseMs = 700;
const rounds = 7;
const tabCount = 1_000;
const depth = 1_000_000;
const pageSamples = 2_000;
const payload = { text: 'x'.repeat(200) };

/** Runs `operation` on `connections` loops for a fixed time; returns operations per second. */
async function rate(connections: number, operation: () => Promise<unknown>): Promise<number> {
  // Warm the pool and the prepared statements before the clock starts.
  await Promise.all(Array.from({ length: connections }, () => operation()));
  let count = 0;
  const started = performance.now();
  const deadline = started + phaseMs;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        await operation();
        count += 1;
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

async function rawRate(url: string, connections: number, tabs: string[]): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  const seqs = new Map<string, number>();
  try {
    return await rate(connections, async () => {
      const tabId = tabs[Math.floor(Math.random() * tabs.length)]!;
      const seq = (seqs.get(tabId) ?? 0) + 1;
      seqs.set(tabId, seq);
      await pool.query({
        name: 'raw_insert',
        text: `INSERT INTO raw_chunks (id, tab_id, seq, turn_id, step, role, type, data)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        values: [
          randomUUID(),
          tabId,
          seq,
          randomUUID(),
          0,
          'user',
          'text',
          JSON.stringify(payload),
        ],
      });
    });
  } finally {
    await pool.end();
  }
}

async function storeRate(url: string, connections: number, tabs: string[]): Promise<number> {
  const store = createPostgresStore({ url, maxConnections: connections });
  try {
    return await rate(connections, async () => {
      const tabId = tabs[Math.floor(Math.random() * tabs.length)]!;
      await store.append(tabId, [
        {
          id: randomUUID(),
          tabId,
          turnId: randomUUID(),
          step: 0,
          role: 'user',
          type: 'text',
          data: payload,
        },
      ]);
    });
  } finally {
    await store.close();
  }
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/**
 * Raw and store phases back to back, several rounds: each round's ratio compares two phases
 * run seconds apart, and the median across rounds shrugs off a burst of outside load.
 */
async function appendFigures(url: string, tabs: string[], connections: number) {
  const raws: number[] = [];
  const stores: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const raw = await rawRate(url, connections, tabs);
    const store = await storeRate(url, connections, tabs);
    raws.push(raw);
    stores.push(store);
    ratios.push(store / raw);
  }
  return { raw: median(raws), store: median(stores), ratio: median(ratios) };
}

async function pageLatencies(store: ChunkStore, tabId: string) {
  const head: number[] = [];
  const deep: number[] = [];
  const deepBefore = depth - 900_000 + 1;
  for (let index = 0; index < pageSamples + 50; index += 1) {
    // Alternating keeps both series under the same background load.
    for (const [series, options] of [
      [head, { limit: 50 }],
      [deep, { limit: 50, before: deepBefore }],
    ] as const) {
      const started = performance.now();
      const page = await store.page(tabId, options);
      const elapsed = performance.now() - started;
      if (page.chunks.length !== 50) throw new Error('page bench read a short page');
      if (index >= 50) series.push(elapsed);
    }
  }
  head.sort((a, b) => a - b);
  deep.sort((a, b) => a - b);
  return { head, deep };
}

export default async function storeBench(): Promise<Record<string, number>> {
  const database = await createTestDatabase(adminUrl);
  const admin = new pg.Pool({ connectionString: database.url, max: 2 });
  try {
    const setupStore = createPostgresStore({ pool: admin });
    await setupStore.migrate();
    await admin.query(`CREATE TABLE raw_chunks (
      id uuid PRIMARY KEY, tab_id uuid NOT NULL, seq bigint NOT NULL, turn_id uuid NOT NULL,
      step integer NOT NULL, role text NOT NULL, type text NOT NULL, data jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`);
    const tenant = await setupStore.createTenant({ name: 'bench' });
    const tabs = (
      await admin.query<{ id: string }>(
        `INSERT INTO tabs (tenant_id, title) SELECT $1, 'bench ' || s
         FROM generate_series(1, ${tabCount}) AS s RETURNING id`,
        [tenant.id],
      )
    ).rows.map((row) => row.id);
    const hotTab = (await setupStore.createTab({ tenantId: tenant.id, title: 'hot' })).id;

    const c8 = await appendFigures(database.url, tabs, 8);
    const c32 = await appendFigures(database.url, tabs, 32);
    const hot = await storeRate(database.url, 8, [hotTab]);

    const deepTab = (await setupStore.createTab({ tenantId: tenant.id, title: 'deep' })).id;
    await loadDeepTab(admin, { tabId: deepTab, depth, textSql: "repeat('y', 150) || s" });
    const pageStore = createPostgresStore({ url: database.url, maxConnections: 1 });
    const { head, deep } = await pageLatencies(pageStore, deepTab).finally(() => pageStore.close());
    const headP99 = percentile(head, 0.99);
    const deepP99 = percentile(deep, 0.99);

    return {
      'store.append.ratio.c8': c8.ratio,
      'store.append.ratio.c32': c32.ratio,
      'store.append.store_per_s.c8': c8.store,
      'store.append.store_per_s.c32': c32.store,
      'store.append.raw_per_s.c8': c8.raw,
      'store.append.raw_per_s.c32': c32.raw,
      'store.append.hot_tab_per_s': hot,
      'store.page.head.p50_ms': percentile(head, 0.5),
      'store.page.deep.p50_ms': percentile(deep, 0.5),
      'store.page.head.p99_ms': headP99,
      'store.page.deep.p99_ms': deepP99,
      'store.page.deep_over_head.p99': deepP99 / headP99,
    };
  } finally {
    await admin.end();
    await database.drop();
  }
}
