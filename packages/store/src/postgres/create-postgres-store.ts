import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { Registry } from 'prom-client';
import { z } from 'zod';
import type { ChunkStore } from '../chunk-store';
import { createSqlChunkStore } from '../create-sql-chunk-store';
import { createAppendMetrics } from '../log/append-metrics';
import { migrationsFolder as defaultMigrationsFolder } from '../migrations/migrations-folder';
import { SearchConfigSchema } from '../search/search-store';
import type { SqlClient } from '../sql-client';

/** Advisory lock (two-int key space, apart from the tabs' bigint keys) held while migrating. */
const migrationLockKey = [7262, 1] as const;

const PostgresStoreOptionsSchema = z.object({
  url: z.string().min(1).optional(),
  pool: z.instanceof(pg.Pool).optional(),
  /** Pool size when the store creates the pool. */
  maxConnections: z.number().int().min(1).max(1000).optional(),
  migrationsFolder: z.string().min(1).optional(),
  /**
   * Append batches in flight at once, each on its own connection (default 1): appends that
   * arrive while they are busy go together in the next batch.
   */
  appendLanes: z.number().int().min(1).max(64).optional(),
  /**
   * Where the group commit's histograms go (batch size, batch duration, queue wait); none
   * without it.
   */
  metricsRegistry: z.instanceof(Registry).optional(),
  /**
   * The text search configuration of searches (default `simple`, which serves every language
   * alike); another one gets its own index, built concurrently by migrate().
   */
  searchConfig: SearchConfigSchema.optional(),
});

export type PostgresStoreOptions = z.input<typeof PostgresStoreOptionsSchema>;

/**
 * The store on a real Postgres through a node-postgres pool: the services' adapter. Pass a
 * `url` (the store owns and closes its pool) or a `pool` (the caller keeps ownership).
 */
export function createPostgresStore(options: PostgresStoreOptions): ChunkStore {
  const parsed = PostgresStoreOptionsSchema.parse(options);
  if ((parsed.url === undefined) === (parsed.pool === undefined)) {
    throw new TypeError('createPostgresStore needs exactly one of url or pool');
  }
  const ownsPool = parsed.pool === undefined;
  const pool =
    parsed.pool ?? new pg.Pool({ connectionString: parsed.url, max: parsed.maxConnections ?? 10 });
  if (ownsPool) {
    // An idle client dying (server restart, database dropped) must not crash the process;
    // the next query gets a fresh connection or a proper error.
    pool.on('error', () => {});
  }

  const client: SqlClient = {
    async query<Row extends Record<string, unknown>>(
      text: string,
      values?: unknown[],
      name?: string,
    ) {
      const result = await pool.query<Row>({ text, values, name });
      return result.rows;
    },
  };

  const appends = {
    lanes: parsed.appendLanes ?? 1,
    metrics: createAppendMetrics(parsed.metricsRegistry),
  };
  return createSqlChunkStore(
    client,
    {
      async migrate() {
        const connection = await pool.connect();
        try {
          // Several services may start at once; one migrates, the others wait and find no work.
          await connection.query('SELECT pg_advisory_lock($1, $2)', [...migrationLockKey]);
          try {
            await migrate(drizzle({ client: connection }), {
              migrationsFolder: parsed.migrationsFolder ?? defaultMigrationsFolder,
            });
          } finally {
            await connection.query('SELECT pg_advisory_unlock($1, $2)', [...migrationLockKey]);
          }
        } finally {
          connection.release();
        }
      },
      async close() {
        if (ownsPool) await pool.end();
      },
    },
    appends,
    { config: parsed.searchConfig ?? 'simple', concurrentIndexBuild: true },
  );
}
