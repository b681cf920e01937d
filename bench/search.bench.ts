/**
 * Full-text search figures, on the real Postgres (BENCH_DATABASE_URL, TEST_DATABASE_URL or the
 * local server) in throwaway databases, everything in one run.
 *
 * - search.p99_ms: `store.search` of a two-word query's first page (20 hits) over a corpus of
 *   BENCH_SEARCH_CHUNKS chunks (default 1,000,000) in 1,000 tabs of one tenant: 30 words a
 *   chunk from a 5,000-word vocabulary, skewed so a word is in 0.2 to 20 % of the chunks.
 * - search.ilike_p99_ms: the same query as an ILIKE scan (both words, newest first), same run.
 * - search.index_build_s_per_million: CREATE INDEX CONCURRENTLY of the search index over the
 *   corpus, in seconds per million chunks (the backfill of a deployment that had chunks before
 *   the search migration; appends go on meanwhile).
 * - store.append.with_search_index_ratio.c32: single-chunk `store.append` at 32 appenders over
 *   1,000 tabs with the search index ÷ without it (dropped), short phases alternating over
 *   seven rounds in another database, the order swapped every round; the median of the rounds'
 *   ratios.
 */
import { randomUUID } from 'node:crypto';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import { textChunk } from '@chunklog/store/testing';
import { createTestDatabase, type TestDatabase } from '@chunklog/test-infra';
import pg from 'pg';
import { median, percentile } from './percentile';
import { rate } from './timed-rate';

const adminUrl =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

const corpusChunks = Number(process.env.BENCH_SEARCH_CHUNKS ?? 1_000_000);
const tabCount = 1_000;
const vocabulary = 5_000;
const wordsPerChunk = 30;
const samples = 200;
const ilikeSamples = 15;
const phaseMs = 1_500;
const rounds = 7;
const indexName = 'chunks_search_simple_index';
const indexDefinition = `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexName} ON chunks
  USING gin (to_tsvector('simple'::regconfig, chunklog_search_text(type, data)))`;

/** Word pairs of middling frequency: each word in 1 to 3 % of chunks, both in a few hundred. */
const queries = [
  ['w120', 'w345'],
  ['w150', 'w300'],
  ['w200', 'w410'],
  ['w95', 'w520'],
];

/** A 200-character text of vocabulary words, as the append phases write. */
function appendText(): string {
  const words: string[] = [];
  while (words.join(' ').length < 200) {
    words.push(`w${Math.floor(Math.random() ** 2 * vocabulary)}`);
  }
  return words.join(' ');
}

async function newTabs(pool: pg.Pool, tenantId: string): Promise<string[]> {
  return (
    await pool.query<{ id: string }>(
      `INSERT INTO tabs (tenant_id, title) SELECT $1, 'bench tab ' || s
       FROM generate_series(1, ${tabCount}) AS s RETURNING id`,
      [tenantId],
    )
  ).rows.map((row) => row.id);
}

/** Loads the corpus with the search index dropped, then builds it concurrently (timed). */
async function loadCorpus(pool: pg.Pool, tenantId: string): Promise<number> {
  const tabs = await newTabs(pool, tenantId);
  await pool.query(`DROP INDEX ${indexName}`);
  const batch = 100_000;
  for (let start = 0; start < corpusChunks; start += batch) {
    const end = Math.min(corpusChunks, start + batch) - 1;
    // Chunk s goes to tab s % 1000 at seq s / 1000 + 1; the words are drawn per chunk (the
    // inner select refers to s, so it runs for each row).
    await pool.query(
      `INSERT INTO chunks (id, tab_id, seq, turn_id, step, role, type, data, created_at)
       SELECT gen_random_uuid(), ($1::uuid[])[s % ${tabCount} + 1], s / ${tabCount} + 1,
         gen_random_uuid(), 0, CASE WHEN s % 2 = 0 THEN 'user' ELSE 'assistant' END, 'text',
         jsonb_build_object('text', (
           SELECT string_agg('w' || floor(random() ^ 2 * ${vocabulary})::int, ' ')
           FROM generate_series(1, ${wordsPerChunk} + 0 * s)
         )),
         now() - make_interval(secs => ${corpusChunks} - s)
       FROM generate_series(${start}::bigint, ${end}::bigint) AS s`,
      [tabs],
    );
  }
  await pool.query('VACUUM ANALYZE chunks');
  await pool.query('ANALYZE tabs');
  const started = performance.now();
  await pool.query(indexDefinition);
  const seconds = (performance.now() - started) / 1000;
  await pool.query('ANALYZE chunks');
  return seconds / (corpusChunks / 1_000_000);
}

async function searchLatencies(store: ChunkStore, tenantId: string): Promise<number[]> {
  const times: number[] = [];
  for (let sample = -10; sample < samples; sample += 1) {
    const [first, second] = queries[(sample + 10) % queries.length]!;
    const started = performance.now();
    const page = await store.search(tenantId, { q: `${first} ${second}`, limit: 20 });
    const elapsed = performance.now() - started;
    if (page.hits.length === 0) throw new Error(`no hits for ${first} ${second}`);
    if (sample >= 0) times.push(elapsed);
  }
  return times.sort((a, b) => a - b);
}

async function ilikeLatencies(pool: pg.Pool, tenantId: string): Promise<number[]> {
  const times: number[] = [];
  for (let sample = 0; sample < ilikeSamples; sample += 1) {
    const [first, second] = queries[sample % queries.length]!;
    const started = performance.now();
    await pool.query(
      `SELECT c.tab_id, t.title, c.seq, c.id, c.role, c.type, c.data ->> 'text' AS text
       FROM chunks c JOIN tabs t ON t.id = c.tab_id
       WHERE t.tenant_id = $1 AND c.data ->> 'text' ILIKE $2 AND c.data ->> 'text' ILIKE $3
       ORDER BY c.created_at DESC LIMIT 20`,
      [tenantId, `%${first} %`, `%${second} %`],
    );
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

/** Appends per second at 32 appenders, the search index on, then off, alternating. */
async function appendRatio(url: string, pool: pg.Pool, tabs: string[]): Promise<number> {
  const store = createPostgresStore({ url, maxConnections: 32 });
  const append = async () => {
    const tabId = tabs[Math.floor(Math.random() * tabs.length)]!;
    await store.append(tabId, [textChunk(tabId, appendText())]);
    return 1;
  };
  const ratios: number[] = [];
  try {
    // Every other round measures without the index first, so a drift in the machine's load
    // within a round weighs on both sides alike.
    for (let round = 0; round < rounds; round += 1) {
      let without = 0;
      if (round % 2 === 1) {
        await pool.query(`DROP INDEX ${indexName}`);
        without = await rate(phaseMs, 32, append);
        await pool.query(indexDefinition);
      }
      const withIndex = await rate(phaseMs, 32, append);
      if (round % 2 === 0) {
        await pool.query(`DROP INDEX ${indexName}`);
        without = await rate(phaseMs, 32, append);
        await pool.query(indexDefinition);
      }
      ratios.push(withIndex / without);
      console.log(
        `  round ${round + 1}: ${Math.round(withIndex)}/s with the index, ${Math.round(without)}/s without`,
      );
    }
  } finally {
    await store.close();
  }
  return median(ratios);
}

export default async function searchBench(): Promise<Record<string, number>> {
  const corpus: TestDatabase = await createTestDatabase(adminUrl);
  const appends: TestDatabase = await createTestDatabase(adminUrl);
  const corpusPool = new pg.Pool({ connectionString: corpus.url, max: 2 });
  const appendPool = new pg.Pool({ connectionString: appends.url, max: 2 });
  try {
    const corpusStore = createPostgresStore({ url: corpus.url, maxConnections: 2 });
    await corpusStore.migrate();
    const tenant = await corpusStore.createTenant({ name: `bench-${randomUUID()}` });
    const loadStarted = performance.now();
    const buildPerMillion = await loadCorpus(corpusPool, tenant.id);
    console.log(
      `  corpus of ${corpusChunks} chunks loaded and indexed in ${Math.round((performance.now() - loadStarted) / 1000)} s`,
    );
    const search = await searchLatencies(corpusStore, tenant.id).finally(() => corpusStore.close());
    const ilike = await ilikeLatencies(corpusPool, tenant.id);

    const appendStore = createPostgresStore({ pool: appendPool });
    await appendStore.migrate();
    const appendTenant = await appendStore.createTenant({ name: 'bench' });
    const appendTabs = await newTabs(appendPool, appendTenant.id);
    const ratio = await appendRatio(appends.url, appendPool, appendTabs);

    return {
      'search.corpus_chunks': corpusChunks,
      'search.p50_ms': percentile(search, 0.5),
      'search.p99_ms': percentile(search, 0.99),
      'search.ilike_p50_ms': percentile(ilike, 0.5),
      'search.ilike_p99_ms': percentile(ilike, 0.99),
      'search.index_build_s_per_million': buildPerMillion,
      'store.append.with_search_index_ratio.c32': ratio,
    };
  } finally {
    await corpusPool.end();
    await appendPool.end();
    await corpus.drop();
    await appends.drop();
  }
}
