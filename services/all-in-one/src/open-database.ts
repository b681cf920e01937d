import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ChunkStore, createPgliteStore } from '@chunklog/store';
import type { PgliteThread } from '@chunklog/store/pglite-thread';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import {
  type AllInOneConfig,
  pgliteTemplatesFolder,
  refuseOpenWithoutAuth,
} from './all-in-one-config';
import { lockDataDir } from './lock-data-dir';

/** The all-in-one's database: DATA_DIR locked to this process, PGlite opened and migrated on it. */
export interface AllInOneDatabase {
  store: ChunkStore;
  /** Settles when the database is open and migrated; rejects with why it could not be. */
  migrated: Promise<void>;
  /** The process's one metrics registry; the store's group commit figures are in it. */
  metricsRegistry: Registry;
  /** Closes the store, then releases DATA_DIR. */
  close(): Promise<void>;
}

/**
 * Locks DATA_DIR and starts opening PGlite on it, without waiting: PGlite opens on a thread of
 * its own (the store's), so `npm start` calls this before it loads the services' modules and the
 * two run side by side. Throws only when the config may not start at all (no API keys beyond
 * loopback), or the folder cannot be made or is locked by another process.
 */
export function openAllInOneDatabase(
  config: AllInOneConfig,
  logger: Logger,
  /** A PGlite thread started ahead, to open DATA_DIR on (see createPgliteStore's `thread`). */
  thread?: PgliteThread,
): AllInOneDatabase {
  refuseOpenWithoutAuth(config);
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  // Before PGlite opens the folder: two processes on it would each lose the other's writes.
  const lock = lockDataDir(dataDir);
  const metricsRegistry = new Registry();
  let store: ChunkStore;
  try {
    store = createPgliteStore({
      dataDir,
      // A new folder starts as a copy of a migrated template instead of PGlite's initdb.
      templatesFolder: pgliteTemplatesFolder(config) ?? undefined,
      onTemplateError: (error) =>
        logger
          .child({ service: 'all-in-one' })
          .warn({ err: error }, 'no PGlite template for the new data folder; running initdb'),
      metricsRegistry,
      thread,
    });
  } catch (error) {
    lock.release();
    throw error;
  }
  const migrated = store.migrate();
  // Awaited by whoever needs the database, and by close().
  migrated.catch(() => {});
  return {
    store,
    migrated,
    metricsRegistry,
    async close() {
      // The migration finishes before the store closes under it.
      await migrated.catch(() => {});
      await store.close().catch(() => {});
      lock.release();
    },
  };
}
