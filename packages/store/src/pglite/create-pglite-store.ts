import { Registry } from 'prom-client';
import { z } from 'zod';
import type { ChunkStore } from '../chunk-store';
import { createSqlChunkStore } from '../create-sql-chunk-store';
import { createAppendMetrics } from '../log/append-metrics';
import { migrationsCurrent } from '../migrations/migrations-current';
import { migrationsFolder as defaultMigrationsFolder } from '../migrations/migrations-folder';
import { SearchConfigSchema } from '../search/search-store';
import type { SqlClient } from '../sql-client';
import { migratePglite, openPgliteFolder } from './open-pglite-folder';
import type { PgliteThread } from './pglite-thread';

const PgliteStoreOptionsSchema = z.object({
  /** Folder holding the database files; absent: in memory, gone at close. */
  dataDir: z.string().min(1).optional(),
  migrationsFolder: z.string().min(1).optional(),
  /** See openPgliteFolder's `templatesFolder`. */
  templatesFolder: z.string().min(1).optional(),
  /** See openPgliteFolder's `onTemplateError`. */
  onTemplateError: z
    .custom<(error: unknown) => void>((value) => typeof value === 'function')
    .optional(),
  /**
   * An open already under way (openPgliteFolder), in place of the one the store would start from
   * `dataDir` and `templatesFolder`: a process that sends it first loads the store's modules
   * while PGlite opens.
   */
  opened: z.custom<Promise<PgliteThread>>((value) => value instanceof Promise).optional(),
  /**
   * Where the group commit's histograms go (batch size, batch duration, queue wait); none
   * without it.
   */
  metricsRegistry: z.instanceof(Registry).optional(),
  /** See createPostgresStore's `searchConfig`. */
  searchConfig: SearchConfigSchema.optional(),
});

export type PgliteStoreOptions = z.input<typeof PgliteStoreOptionsSchema>;

/**
 * The store on embedded Postgres (PGlite) for the all-in-one mode. PGlite runs one query at a
 * time, so concurrent calls queue inside it; the same SQL functions keep the same guarantees.
 * PGlite (a WebAssembly Postgres) runs on a thread of its own (pglite-thread.ts), started when
 * the store is created, so a process that only uses the Postgres store never loads it.
 */
export function createPgliteStore(options: PgliteStoreOptions = {}): ChunkStore {
  const parsed = PgliteStoreOptionsSchema.parse(options);
  const migrationsFolder = parsed.migrationsFolder ?? defaultMigrationsFolder;
  const opened =
    parsed.opened ??
    openPgliteFolder({
      dataDir: parsed.dataDir,
      templatesFolder: parsed.templatesFolder,
      migrationsFolder,
      onTemplateError: parsed.onTemplateError,
    });

  const client: SqlClient = {
    async query<Row extends Record<string, unknown>>(text: string, values?: unknown[]) {
      return (await opened).query<Row>(text, values);
    },
  };

  return createSqlChunkStore(
    client,
    {
      async migrate() {
        // A current database (every start but the first of a folder) skips drizzle's migrator.
        if (await migrationsCurrent(client, migrationsFolder)) return;
        await migratePglite(await opened, migrationsFolder);
      },
      async close() {
        // A store that never opened has nothing to close; its open error went to its callers.
        const database = await opened.catch(() => null);
        await database?.close();
      },
    },
    // One connection: one batch in flight, the next gathering behind it.
    { lanes: 1, metrics: createAppendMetrics(parsed.metricsRegistry) },
    { config: parsed.searchConfig ?? 'simple', concurrentIndexBuild: false },
  );
}
