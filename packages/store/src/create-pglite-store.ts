import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { Registry } from 'prom-client';
import { z } from 'zod';
import type { ChunkStore } from './chunk-store';
import { createSqlChunkStore } from './create-sql-chunk-store';
import { createAppendMetrics } from './log/append-metrics';
import { migrationsFolder as defaultMigrationsFolder } from './migrations-folder';
import type { SqlClient } from './sql-client';

const PgliteStoreOptionsSchema = z.object({
  /** Folder holding the database files; absent: in memory, gone at close. */
  dataDir: z.string().min(1).optional(),
  migrationsFolder: z.string().min(1).optional(),
  /** Where the group commit's histograms go (batch size, queue wait); none without it. */
  metricsRegistry: z.instanceof(Registry).optional(),
});

export type PgliteStoreOptions = z.input<typeof PgliteStoreOptionsSchema>;

/**
 * The store on embedded Postgres (PGlite) for the all-in-one mode. PGlite runs one query at a
 * time, so concurrent calls queue inside it; the same SQL functions keep the same guarantees.
 */
export function createPgliteStore(options: PgliteStoreOptions = {}): ChunkStore {
  const parsed = PgliteStoreOptionsSchema.parse(options);
  const database = new PGlite(parsed.dataDir);

  const client: SqlClient = {
    async query<Row extends Record<string, unknown>>(text: string, values?: unknown[]) {
      const result = await database.query<Row>(text, values);
      return result.rows;
    },
  };

  return createSqlChunkStore(
    client,
    {
      async migrate() {
        await migrate(drizzle({ client: database }), {
          migrationsFolder: parsed.migrationsFolder ?? defaultMigrationsFolder,
        });
      },
      async close() {
        await database.close();
      },
    },
    // One connection: one batch in flight, the next gathering behind it.
    { lanes: 1, metrics: createAppendMetrics(parsed.metricsRegistry) },
  );
}
