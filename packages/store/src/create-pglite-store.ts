import { mkdirSync } from 'node:fs';
import { Registry } from 'prom-client';
import { z } from 'zod';
import type { ChunkStore } from './chunk-store';
import { createSqlChunkStore } from './create-sql-chunk-store';
import { createAppendMetrics } from './log/append-metrics';
import { migrationsCurrent } from './migrations-current';
import { migrationsFolder as defaultMigrationsFolder } from './migrations-folder';
import { seedFromTemplate } from './pglite-template';
import { type PgliteThread, startPgliteThread } from './pglite-thread';
import type { SqlClient } from './sql-client';

const PgliteStoreOptionsSchema = z.object({
  /** Folder holding the database files; absent: in memory, gone at close. */
  dataDir: z.string().min(1).optional(),
  migrationsFolder: z.string().min(1).optional(),
  /**
   * Where a migrated template data folder is made once; a new `dataDir` starts as a copy of it
   * instead of running initdb. Absent: every new folder runs initdb.
   */
  templatesFolder: z.string().min(1).optional(),
  /**
   * Told why a new `dataDir` could not start from a template (an unwritable templates folder);
   * the folder then runs initdb as without one.
   */
  onTemplateError: z
    .custom<(error: unknown) => void>((value) => typeof value === 'function')
    .optional(),
  /**
   * A PGlite thread started ahead (startPgliteThread), not yet opened, to open `dataDir` on: a
   * process that starts it first prepares PGlite beside its own start-up. Absent: one is started.
   */
  thread: z
    .custom<PgliteThread>((value) => typeof value === 'object' && value !== null && 'open' in value)
    .optional(),
  /** Where the group commit's histograms go (batch size, queue wait); none without it. */
  metricsRegistry: z.instanceof(Registry).optional(),
});

export type PgliteStoreOptions = z.input<typeof PgliteStoreOptionsSchema>;

/**
 * Applies the migrations through drizzle's proxy migrator: it reads the journal and the newest
 * applied migration, and hands over the statements still to run, which the thread runs in one
 * transaction.
 */
async function migratePglite(database: PgliteThread, migrationsFolder: string): Promise<void> {
  const [{ drizzle }, { migrate }] = await Promise.all([
    import('drizzle-orm/pg-proxy'),
    import('drizzle-orm/pg-proxy/migrator'),
  ]);
  const db = drizzle(async (text, values) => ({ rows: await database.query(text, values) }));
  await migrate(db, (statements) => database.transaction(statements), { migrationsFolder });
}

/**
 * PGlite's buffer pool. Postgres's default (128MB) is sized for a server; PGlite zeroes the whole
 * pool at every open, which at 128MB is most of its start-up, and keeps it in the process's
 * memory. One embedded connection over a local chat log needs far less (SQLite's page cache is
 * 2MB); a page outside the pool is one read from the operating system's file cache.
 */
const settings = { shared_buffers: '16MB' };

/** Opens PGlite on `dataDir` (in memory without one), on `thread` or a thread of its own. */
async function openPglite(dataDir?: string, thread?: PgliteThread): Promise<PgliteThread> {
  const database = thread ?? startPgliteThread();
  try {
    await database.open({ dataDir, settings });
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/**
 * The store on embedded Postgres (PGlite) for the all-in-one mode. PGlite runs one query at a
 * time, so concurrent calls queue inside it; the same SQL functions keep the same guarantees.
 * PGlite (a WebAssembly Postgres) runs on a thread of its own (pglite-thread.ts), started when
 * the store is created, so a process that only uses the Postgres store never loads it.
 */
export function createPgliteStore(options: PgliteStoreOptions = {}): ChunkStore {
  const parsed = PgliteStoreOptionsSchema.parse(options);
  const migrationsFolder = parsed.migrationsFolder ?? defaultMigrationsFolder;
  const { dataDir, templatesFolder } = parsed;

  const opened = (async () => {
    if (dataDir && templatesFolder) {
      mkdirSync(dataDir, { recursive: true });
      await seedFromTemplate({
        dataDir,
        templatesFolder,
        migrationsFolder,
        async makeTemplate(folder) {
          const template = await openPglite(folder);
          try {
            await migratePglite(template, migrationsFolder);
          } finally {
            await template.close();
          }
        },
      }).catch((error: unknown) => parsed.onTemplateError?.(error));
    }
    return openPglite(dataDir, parsed.thread);
  })();
  // A failed open is reported by the first call that needs the database (migrate, as a rule).
  opened.catch(() => {});

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
  );
}
