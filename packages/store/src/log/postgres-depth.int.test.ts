import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase, testPostgresUrl } from '@chunklog/test-infra';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkStore } from '../chunk-store';
import { createPostgresStore } from '../postgres/create-postgres-store';
import { loadDeepTab } from '../testing';
import { type PageRange, pageStatement } from './page-statement';

const adminUrl = await testPostgresUrl();
const depth = 1_000_000;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** The definitions of the chunks table's constraints and indexes, to compare before and after. */
async function chunkSchema(pool: pg.Pool): Promise<string[]> {
  const result = await pool.query<{ definition: string }>(
    `SELECT conname || ' ' || pg_get_constraintdef(oid) AS definition FROM pg_constraint
     WHERE conrelid = 'chunks'::regclass
     UNION ALL SELECT indexdef FROM pg_indexes WHERE tablename = 'chunks'
     ORDER BY 1`,
  );
  return result.rows.map((row) => row.definition);
}

describe.skipIf(adminUrl === null)('a tab with a million chunks on Postgres', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let store: ChunkStore;
  let tabId: string;

  beforeAll(async () => {
    database = await createTestDatabase(adminUrl!);
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    // Idle clients killed when the database is dropped must not crash the test process.
    pool.on('error', () => {});
    store = createPostgresStore({ pool });
    await store.migrate();
    const tenant = await store.createTenant({ name: 'depth' });
    tabId = (await store.createTab({ tenantId: tenant.id, title: 'deep' })).id;
    const before = await chunkSchema(pool);
    // The schema comparison below proves the bulk load rebuilt the migrated table.
    await loadDeepTab(pool, { tabId, depth, textSql: "'chunk ' || s" });
    expect(await chunkSchema(pool)).toEqual(before);
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await pool?.end();
    await database?.drop();
  });

  const seqs = (page: { chunks: Array<{ seq: number }> }) => page.chunks.map((chunk) => chunk.seq);
  const range = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, index) => from + index);

  it('pages at the head (the newest chunks) with the total', async () => {
    const page = await store.page(tabId, { limit: 50 });
    expect(seqs(page)).toEqual(range(depth - 49, depth));
    expect(page.total).toBe(depth);
    expect(page.hasMore).toBe(true);
    expect(page.chunks.at(-1)!.data).toEqual({ text: `chunk ${depth}` });
  });

  it('pages in the middle, backwards and forwards', async () => {
    const backwards = await store.page(tabId, { limit: 50, before: 500_001 });
    expect(seqs(backwards)).toEqual(range(499_951, 500_000));
    expect(backwards.chunks.map((chunk) => chunk.data)).toEqual(
      range(499_951, 500_000).map((seq) => ({ text: `chunk ${seq}` })),
    );
    const forwards = await store.page(tabId, { limit: 3, after: 499_999 });
    expect(seqs(forwards)).toEqual([500_000, 500_001, 500_002]);
    expect(forwards.hasMore).toBe(true);
  });

  it('pages at the tail (the oldest chunks)', async () => {
    const oldest = await store.page(tabId, { limit: 50, before: 51 });
    expect(seqs(oldest)).toEqual(range(1, 50));
    expect(oldest.hasMore).toBe(false);
    const fromStart = await store.page(tabId, { limit: 50, after: 0 });
    expect(seqs(fromStart)).toEqual(range(1, 50));
    expect(fromStart.hasMore).toBe(true);
  });

  it('plans every page as a bounded index range scan, sorting no more than the page', async () => {
    const ranges: PageRange[] = [
      { kind: 'tail' },
      { kind: 'before', seq: 100_000 },
      { kind: 'after', seq: 900_000 },
    ];
    const client = await pool.connect();
    try {
      for (const pageRange of ranges) {
        const statement = pageStatement(tabId, 51, pageRange);
        // Both the plan for these values and the generic plan a prepared statement may
        // settle on after a few executions.
        for (const mode of ['force_custom_plan', 'force_generic_plan']) {
          await client.query(`SET plan_cache_mode = ${mode}`);
          await client.query(`PREPARE page_probe AS ${statement.text}`);
          const placeholders = statement.values.map((value) => `'${value}'`).join(', ');
          const explained = await client.query(
            `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE page_probe(${placeholders})`,
          );
          await client.query('DEALLOCATE page_probe');
          const nodes = planNodes(explained.rows[0]['QUERY PLAN'][0].Plan as PlanNode);
          const label = `${pageRange.kind} ${mode}`;
          // The pages of a tab's segments (one for a tab that is no fork) are merged by seq: a
          // sort of at most a page per segment, never of the tab.
          for (const sort of nodes.filter((node) => node['Node Type'].includes('Sort'))) {
            expect(sort['Actual Rows'], label).toBeLessThanOrEqual(51);
          }
          // The page itself plus the two probes behind the total: all range scans of the
          // (tab_id, seq) index that stop at the page, never a walk of the tab.
          const chunkScans = nodes.filter((node) => node['Relation Name'] === 'chunks');
          expect(chunkScans, label).toHaveLength(3);
          for (const scan of chunkScans) {
            expect(scan['Node Type'], label).toMatch(/^Index (Only )?Scan$/);
            expect(scan['Index Name'], label).toBe('chunks_tab_id_seq_unique');
            expect(scan['Actual Rows'], label).toBeLessThanOrEqual(51);
          }
        }
      }
    } finally {
      await client.query('RESET plan_cache_mode');
      client.release();
    }
  });

  it('appends above the generated chunks', async () => {
    const [chunk] = await store.append(tabId, [
      {
        id: randomUUID(),
        tabId,
        turnId: randomUUID(),
        step: 0,
        role: 'user',
        type: 'text',
        data: { text: 'after a million' },
      },
    ]);
    expect(chunk!.seq).toBe(depth + 1);
    expect((await store.page(tabId, { limit: 1 })).total).toBe(depth + 1);
  });
});
