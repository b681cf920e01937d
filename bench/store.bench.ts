/**
 * Postgres chunk store figures, on the real Postgres (BENCH_DATABASE_URL, TEST_DATABASE_URL or
 * the local server) in throwaway databases, everything in one run. Short phases of each
 * contender alternate over several rounds, so outside load on a shared machine hits them alike;
 * a ratio is the median over rounds of that round's ratio, a rate the median of its phases.
 *
 * - store.append.ratio.c8 / .c32: single-chunk `store.append` (group commit) ÷ raw single-row
 *   INSERTs of the same 200-character payload into a plain table (primary key only), 8 and 32
 *   connections over 1,000 tabs.
 * - store.append.hot_ratio: 8 appenders on one tab ÷ raw INSERTs on one key.
 * - store.append.of_limit.c32: the store at 32 appenders ÷ raw multi-row INSERTs batched the way
 *   the store's batches averaged in that round (rows per statement = mean batch size, seqs
 *   handed out by the client, 32 ÷ batch size connections): what the contract's cost leaves of
 *   what Postgres does with the same batching.
 * - store.append.of_limit_same_indexes.c8 / .c32: the same, the raw batched INSERTs going into a
 *   table shaped as `chunks` (`LIKE chunks INCLUDING ALL`: its columns, defaults and indexes,
 *   the (tab_id, seq) one every page reads included) rather than into the plain table: what the
 *   append's own work (the locks, the tails, the checks) leaves, apart from what the table's
 *   indexes cost any writer.
 * - store.append.statement_of_limit.c8 / .c32: the same comparison made of the statements alone,
 *   without the client around them: rows per millisecond of a store batch (its mean time from
 *   `chunklog_store_append_batch_duration_seconds`: statement, commit, round trip) over rows per
 *   millisecond of the raw batched INSERT (send to answer). The store's batches run one after
 *   another on its lane, so of_limit cannot exceed it by much: it is what the contract's work in
 *   Postgres (the locks, the tails, the (tab_id, seq) index) leaves, before any client cost.
 * - store.append.p50_ms.c1: one appender, no concurrency, against the append as it was before
 *   the group commit (the chunk validated, then the single chunklog_append statement): batching
 *   must not add latency when there is nothing to batch.
 * - store.append.vs_emmett.c32 / vs_message_db.c32: the store at 32 appenders over 1,000 tabs ÷
 *   Emmett's PostgreSQL event store (appendToStream) and Message DB's write_message over 1,000
 *   streams, each in its own database on the same server. Message DB locks a stream's category;
 *   each stream is given a category of its own (no '-' in its name), so its appends to
 *   different streams do not serialize.
 * - store.page.*: page read latency (50 chunks, 2,000 samples each, alternating) on a
 *   1,000,000-chunk tab at the head and 900,000 chunks back (goal: deep p99 ≤ 1.2 × head p99).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NewChunkSchema } from '@chunklog/chunk-core';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import { loadDeepTab, textChunk } from '@chunklog/store/testing';
import { createTestDatabase, type TestDatabase } from '@chunklog/test-infra';
import { isExpectedVersionConflictError } from '@event-driven-io/emmett';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import pg from 'pg';
import { Registry } from 'prom-client';
import { median, percentile } from './percentile';
import { rate } from './timed-rate';

const adminUrl =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

const phaseMs = 700;
const rounds = 7;
const tabCount = 1_000;
const depth = 1_000_000;
const pageSamples = 2_000;
const loneSamples = 1_500;
const payload = { text: 'x'.repeat(200) };
const payloadJson = JSON.stringify(payload);

function pick<T>(values: readonly T[]): T {
  return values[Math.floor(Math.random() * values.length)]!;
}

async function withPool<T>(
  url: string,
  max: number,
  use: (pool: pg.Pool) => Promise<T>,
): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max });
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}

type RawTable = 'raw_chunks' | 'raw_chunks_indexed';
/** The last seq handed out per tab in each raw table, across phases (one of them is unique). */
const rawSeqs: Record<RawTable, Map<string, number>> = {
  raw_chunks: new Map(),
  raw_chunks_indexed: new Map(),
};

/**
 * Raw INSERTs of `rowsPerStatement` rows each into `table`, seqs handed out by the client: rows
 * per second, and the mean time one statement took from send to answer.
 */
async function rawRate(
  url: string,
  connections: number,
  tabs: string[],
  rowsPerStatement = 1,
  table: RawTable = 'raw_chunks',
) {
  const seqs = rawSeqs[table];
  const placeholders = Array.from(
    { length: rowsPerStatement },
    (_, row) =>
      `(${Array.from({ length: 8 }, (_, column) => `$${row * 8 + column + 1}`).join(', ')})`,
  ).join(', ');
  const text = `INSERT INTO ${table} (id, tab_id, seq, turn_id, step, role, type, data)
                VALUES ${placeholders}`;
  let statements = 0;
  let statementMs = 0;
  let timing = false;
  const perSecond = await withPool(url, connections, async (pool) => {
    const insert = async () => {
      const values: unknown[] = [];
      for (let row = 0; row < rowsPerStatement; row += 1) {
        const tabId = pick(tabs);
        const seq = (seqs.get(tabId) ?? 0) + 1;
        seqs.set(tabId, seq);
        values.push(randomUUID(), tabId, seq, randomUUID(), 0, 'user', 'text', payloadJson);
      }
      const started = performance.now();
      await pool.query({ name: `${table}_insert_${rowsPerStatement}`, text, values });
      if (timing) {
        statementMs += performance.now() - started;
        statements += 1;
      }
      return rowsPerStatement;
    };
    // Statements timed once every connection is open and has prepared the statement.
    await Promise.all(Array.from({ length: connections }, insert));
    timing = true;
    return rate(phaseMs, connections, insert);
  });
  return { perSecond, statementMs: statementMs / statements };
}

const newChunk = (tabId: string) => textChunk(tabId, payload.text);

/** A histogram's sum and count on `registry`. */
async function histogramTotals(registry: Registry, name: string) {
  const { values } = (await registry.getSingleMetric(name)!.get()) as {
    values: Array<{ metricName?: string; value: number }>;
  };
  const total = (suffix: string) =>
    values.find((entry) => entry.metricName === `${name}${suffix}`)?.value ?? 0;
  return { sum: total('_sum'), count: Math.max(1, total('_count')) };
}

/**
 * Store appends per second, the mean number of appends its batches carried, and the mean time
 * a batch took (its statement, commit and round trip).
 */
async function storeRate(url: string, connections: number, tabs: string[]) {
  const metricsRegistry = new Registry();
  const store = createPostgresStore({ url, maxConnections: connections, metricsRegistry });
  const append = async () => {
    const tabId = pick(tabs);
    await store.append(tabId, [newChunk(tabId)]);
    return 1;
  };
  try {
    // The figures count once the connections are open and have prepared both statements (the
    // lone append's, then the batch's).
    for (let round = 0; round < 2; round += 1) {
      await Promise.all(Array.from({ length: connections }, append));
    }
    metricsRegistry.resetMetrics();
    const perSecond = await rate(phaseMs, connections, append);
    const sizes = await histogramTotals(metricsRegistry, 'chunklog_store_append_batch_size');
    const durations = await histogramTotals(
      metricsRegistry,
      'chunklog_store_append_batch_duration_seconds',
    );
    return {
      perSecond,
      meanBatch: sizes.sum / sizes.count,
      batchMs: (durations.sum / durations.count) * 1000,
    };
  } finally {
    await store.close();
  }
}

/**
 * Each round: raw single-row INSERTs, the store, then raw INSERTs batched like the store's, into
 * the plain table and into one shaped as `chunks`.
 */
async function appendFigures(url: string, tabs: string[], connections: number) {
  const raws: number[] = [];
  const stores: number[] = [];
  const ratios: number[] = [];
  const limits: number[] = [];
  const indexedLimits: number[] = [];
  const statementLimits: number[] = [];
  const batches: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const raw = await rawRate(url, connections, tabs);
    const store = await storeRate(url, connections, tabs);
    const rowsPerStatement = Math.max(1, Math.round(store.meanBatch));
    const batchedConnections = Math.max(1, Math.round(connections / rowsPerStatement));
    const batched = await rawRate(url, batchedConnections, tabs, rowsPerStatement);
    const indexed = await rawRate(
      url,
      batchedConnections,
      tabs,
      rowsPerStatement,
      'raw_chunks_indexed',
    );
    raws.push(raw.perSecond);
    stores.push(store.perSecond);
    ratios.push(store.perSecond / raw.perSecond);
    limits.push(store.perSecond / batched.perSecond);
    indexedLimits.push(store.perSecond / indexed.perSecond);
    // Rows a statement stores per millisecond it runs, ours over the raw one's.
    statementLimits.push(
      store.meanBatch / store.batchMs / (rowsPerStatement / batched.statementMs),
    );
    batches.push(store.meanBatch);
  }
  return {
    raw: median(raws),
    store: median(stores),
    ratio: median(ratios),
    ofLimit: median(limits),
    ofLimitSameIndexes: median(indexedLimits),
    statementOfLimit: median(statementLimits),
    meanBatch: median(batches),
  };
}

async function hotFigures(url: string, hotTab: string) {
  const ratios: number[] = [];
  const stores: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    // Raw: every row on the same key, as the store's rows are all on the hot tab.
    const raw = await rawRate(url, 8, [randomUUID()]);
    const store = await storeRate(url, 8, [hotTab]);
    ratios.push(store.perSecond / raw.perSecond);
    stores.push(store.perSecond);
  }
  return { ratio: median(ratios), store: median(stores) };
}

/**
 * One appender through the store against the append as it was before the group commit, taking
 * turns append by append, so both series see the same moments of a noisy machine.
 */
async function loneAppendFigures(url: string, tabs: string[]) {
  const store = createPostgresStore({ url, maxConnections: 1 });
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const ours: number[] = [];
  const before: number[] = [];
  const timed = async (series: number[], operation: () => Promise<unknown>) => {
    const started = performance.now();
    await operation();
    series.push(performance.now() - started);
  };
  try {
    for (let index = 0; index < loneSamples + 20; index += 1) {
      await timed(ours, () => {
        const tabId = pick(tabs);
        return store.append(tabId, [newChunk(tabId)]);
      });
      await timed(before, () => {
        const tabId = pick(tabs);
        const chunk = NewChunkSchema.parse(newChunk(tabId));
        return pool.query({
          name: 'chunklog_append',
          text: 'SELECT * FROM chunklog_append($1, $2::jsonb, $3)',
          values: [tabId, JSON.stringify([chunk]), null],
        });
      });
    }
  } finally {
    await store.close();
    await pool.end();
  }
  // The first appends of each warm their connection and prepared statement.
  const store50 = percentile(
    ours.slice(20).sort((a, b) => a - b),
    0.5,
  );
  const before50 = percentile(
    before.slice(20).sort((a, b) => a - b),
    0.5,
  );
  return { store: store50, single: before50, ratio: store50 / before50 };
}

/** The SQL files of Message DB's install script that a bench needs (no roles, no views). */
const messageDbFiles = [
  'schema/message-store.sql',
  'extensions/pgcrypto.sql',
  'tables/messages.sql',
  'types/message.sql',
  'functions/message-store-version.sql',
  'functions/hash-64.sql',
  'functions/acquire-lock.sql',
  'functions/category.sql',
  'functions/is-category.sql',
  'functions/id.sql',
  'functions/cardinal-id.sql',
  'functions/stream-version.sql',
  'functions/write-message.sql',
  'indexes/messages-id.sql',
  'indexes/messages-stream.sql',
  'indexes/messages-category.sql',
];

async function installMessageDb(url: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const root = join(dirname(require.resolve('@eventide/message-db/package.json')), 'database');
  await withPool(url, 1, async (pool) => {
    for (const file of messageDbFiles) await pool.query(await readFile(join(root, file), 'utf8'));
  });
}

function messageDbRate(url: string, connections: number, streams: string[]) {
  const pool = new pg.Pool({
    connectionString: url,
    max: connections,
    options: '-c search_path=message_store,public',
  });
  return rate(phaseMs, connections, async () => {
    await pool.query({
      name: 'write_message',
      text: 'SELECT write_message($1, $2, $3, $4)',
      values: [randomUUID(), pick(streams), 'ChunkAppended', payloadJson],
    });
    return 1;
  }).finally(() => pool.end());
}

function emmettRate(url: string, connections: number, streams: string[]) {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  const eventStore = getPostgreSQLEventStore(url, {
    connectionOptions: { pool, pooled: true },
    schema: { autoMigration: 'None' },
  });
  return rate(phaseMs, connections, async () => {
    const stream = pick(streams);
    // Without an expected version Emmett still refuses an append that lost a race for the
    // stream's next position; the caller retries it, as an application would.
    for (;;) {
      try {
        await eventStore.appendToStream(stream, [{ type: 'ChunkAppended', data: payload }]);
        return 1;
      } catch (error) {
        if (!isExpectedVersionConflictError(error)) throw error;
      }
    }
  }).finally(async () => {
    await eventStore.close();
    await pool.end();
  });
}

async function peerFigures(url: string, tabs: string[]) {
  const emmettDatabase = await createTestDatabase(adminUrl);
  const messageDbDatabase = await createTestDatabase(adminUrl);
  try {
    const setup = getPostgreSQLEventStore(emmettDatabase.url);
    await setup.schema.migrate();
    await setup.close();
    await installMessageDb(messageDbDatabase.url);
    const emmettStreams = tabs.map((tabId) => `tab-${tabId}`);
    const messageDbStreams = tabs.map((tabId) => `tab_${tabId.replaceAll('-', '')}`);
    const vsEmmett: number[] = [];
    const vsMessageDb: number[] = [];
    const emmetts: number[] = [];
    const messageDbs: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const emmett = await emmettRate(emmettDatabase.url, 32, emmettStreams);
      const messageDb = await messageDbRate(messageDbDatabase.url, 32, messageDbStreams);
      const store = await storeRate(url, 32, tabs);
      emmetts.push(emmett);
      messageDbs.push(messageDb);
      vsEmmett.push(store.perSecond / emmett);
      vsMessageDb.push(store.perSecond / messageDb);
    }
    return {
      vsEmmett: median(vsEmmett),
      vsMessageDb: median(vsMessageDb),
      emmett: median(emmetts),
      messageDb: median(messageDbs),
    };
  } finally {
    await emmettDatabase.drop();
    await messageDbDatabase.drop();
  }
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
  const database: TestDatabase = await createTestDatabase(adminUrl);
  const admin = new pg.Pool({ connectionString: database.url, max: 2 });
  try {
    const setupStore = createPostgresStore({ pool: admin });
    await setupStore.migrate();
    await admin.query(`CREATE TABLE raw_chunks (
      id uuid PRIMARY KEY, tab_id uuid NOT NULL, seq bigint NOT NULL, turn_id uuid NOT NULL,
      step integer NOT NULL, role text NOT NULL, type text NOT NULL, data jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await admin.query('CREATE TABLE raw_chunks_indexed (LIKE chunks INCLUDING ALL)');
    const tenant = await setupStore.createTenant({ name: 'bench' });
    const tabs = (
      await admin.query<{ id: string }>(
        `INSERT INTO tabs (tenant_id, title) SELECT $1, 'bench ' || s
         FROM generate_series(1, ${tabCount}) AS s RETURNING id`,
        [tenant.id],
      )
    ).rows.map((row) => row.id);
    const hotTab = (await setupStore.createTab({ tenantId: tenant.id, title: 'hot' })).id;

    const lone = await loneAppendFigures(database.url, tabs);
    const c8 = await appendFigures(database.url, tabs, 8);
    const c32 = await appendFigures(database.url, tabs, 32);
    const hot = await hotFigures(database.url, hotTab);
    const peers = await peerFigures(database.url, tabs);

    const deepTab = (await setupStore.createTab({ tenantId: tenant.id, title: 'deep' })).id;
    await loadDeepTab(admin, { tabId: deepTab, depth, textSql: "repeat('y', 150) || s" });
    const pageStore = createPostgresStore({ url: database.url, maxConnections: 1 });
    const { head, deep } = await pageLatencies(pageStore, deepTab).finally(() => pageStore.close());
    const headP99 = percentile(head, 0.99);
    const deepP99 = percentile(deep, 0.99);

    return {
      'store.append.ratio.c8': c8.ratio,
      'store.append.ratio.c32': c32.ratio,
      'store.append.hot_ratio': hot.ratio,
      'store.append.of_limit.c8': c8.ofLimit,
      'store.append.of_limit.c32': c32.ofLimit,
      'store.append.of_limit_same_indexes.c8': c8.ofLimitSameIndexes,
      'store.append.of_limit_same_indexes.c32': c32.ofLimitSameIndexes,
      'store.append.statement_of_limit.c8': c8.statementOfLimit,
      'store.append.statement_of_limit.c32': c32.statementOfLimit,
      'store.append.p50_ms.c1': lone.store,
      'store.append.p50_ms.c1_single_statement': lone.single,
      'store.append.p50_over_single.c1': lone.ratio,
      'store.append.vs_emmett.c32': peers.vsEmmett,
      'store.append.vs_message_db.c32': peers.vsMessageDb,
      'store.append.store_per_s.c8': c8.store,
      'store.append.store_per_s.c32': c32.store,
      'store.append.raw_per_s.c8': c8.raw,
      'store.append.raw_per_s.c32': c32.raw,
      'store.append.mean_batch.c8': c8.meanBatch,
      'store.append.mean_batch.c32': c32.meanBatch,
      'store.append.hot_tab_per_s': hot.store,
      'store.append.emmett_per_s.c32': peers.emmett,
      'store.append.message_db_per_s.c32': peers.messageDb,
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
