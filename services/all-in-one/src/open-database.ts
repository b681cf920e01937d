import type { ChunkStore } from '@chunklog/store';
import { createPgliteStore } from '@chunklog/store/pglite';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { AllInOneConfig } from './all-in-one-config';
import { type DataDirOpen, openDataDir } from './open-data-dir';

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
 * The store on DATA_DIR, migrating from the start. `dataDir` is the open `npm start` sent before
 * it loaded this module (openDataDir); without it, DATA_DIR is locked and opened here. Throws
 * as openDataDir does.
 */
export function openAllInOneDatabase(
  config: AllInOneConfig,
  logger: Logger,
  dataDir: DataDirOpen = openDataDir(config),
): AllInOneDatabase {
  dataDir.opened.then(
    () => {
      for (const error of dataDir.templateErrors) {
        logger
          .child({ service: 'all-in-one' })
          .warn({ err: error }, 'no PGlite template for the new data folder; ran initdb');
      }
    },
    () => {},
  );
  const metricsRegistry = new Registry();
  let store: ChunkStore;
  try {
    store = createPgliteStore({
      opened: dataDir.opened,
      metricsRegistry,
      searchConfig: config.SEARCH_TEXT_CONFIG,
    });
  } catch (error) {
    void dataDir.opened.then((database) => database.close()).catch(() => {});
    dataDir.release();
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
      dataDir.release();
    },
  };
}
