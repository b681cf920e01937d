import { mkdirSync } from 'node:fs';
import { migrationsFolder as defaultMigrationsFolder } from '../migrations/migrations-folder';
import { seedFromTemplate } from './pglite-template';
import { type PgliteThread, startPgliteThread } from './pglite-thread';

export interface PgliteFolderOptions {
  /** Folder holding the database files; absent: in memory, gone at close. */
  dataDir?: string;
  /** The migrations a template is made with; default the committed ones. */
  migrationsFolder?: string;
  /**
   * Where a migrated template data folder is made once; a new `dataDir` starts as a copy of it
   * instead of running initdb. Absent: every new folder runs initdb.
   */
  templatesFolder?: string;
  /**
   * Told why a new `dataDir` could not start from a template (an unwritable templates folder);
   * the folder then runs initdb as without one.
   */
  onTemplateError?: (error: unknown) => void;
  /**
   * A PGlite thread started ahead (startPgliteThread), not yet opened, to open `dataDir` on: a
   * process that starts it first prepares PGlite beside its own start-up. Absent: one is started.
   */
  thread?: PgliteThread;
}

/**
 * PGlite zeroes its shared memory at every open, slow on a small VM; Postgres's defaults (a
 * 128MB pool, tables for 100 connections) are for a server, and one embedded connection needs
 * far less. Four connections leave room for Postgres's three reserved ones: 8MB in all.
 */
const settings = { shared_buffers: '4MB', max_connections: '4' };

/**
 * Applies the migrations through drizzle's proxy migrator: it reads the journal and the newest
 * applied migration, and hands over the statements still to run, which the thread runs in one
 * transaction.
 */
export async function migratePglite(
  database: PgliteThread,
  migrationsFolder: string,
): Promise<void> {
  const [{ drizzle }, { migrate }] = await Promise.all([
    import('drizzle-orm/pg-proxy'),
    import('drizzle-orm/pg-proxy/migrator'),
  ]);
  const db = drizzle(async (text, values) => ({ rows: await database.query(text, values) }));
  await migrate(db, (statements) => database.transaction(statements), { migrationsFolder });
}

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
 * Opens PGlite on a folder (a new one first copied from the migrated template, when a templates
 * folder is given) and resolves with the open database; rejects with why it could not open. Not
 * migrated: the store's migrate() does that. Small on purpose, apart from the store's modules, so
 * a process can send the open before it loads the rest (see createPgliteStore's `opened`).
 */
export function openPgliteFolder(options: PgliteFolderOptions = {}): Promise<PgliteThread> {
  const { dataDir, templatesFolder } = options;
  const migrationsFolder = options.migrationsFolder ?? defaultMigrationsFolder;
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
      }).catch((error: unknown) => options.onTemplateError?.(error));
    }
    return openPglite(dataDir, options.thread);
  })();
  // Awaited by the store; a failure is its to report.
  opened.catch(() => {});
  return opened;
}
