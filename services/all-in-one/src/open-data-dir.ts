import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { openPgliteFolder } from '@chunklog/store/open-pglite-folder';
import type { PgliteThread } from '@chunklog/store/pglite-thread';
import {
  type AllInOneConfig,
  pgliteTemplatesFolder,
  refuseOpenWithoutAuth,
} from './all-in-one-config';
import { lockDataDir } from './lock-data-dir';

/** DATA_DIR locked to this process, with PGlite opening on it. */
export interface DataDirOpen {
  /** Settles when PGlite is open on it (not yet migrated); rejects with why it could not open. */
  opened: Promise<PgliteThread>;
  /**
   * Why a new DATA_DIR could not start from the PGlite template (it then ran initdb), once
   * `opened` settled: this step runs before the process has a logger.
   */
  templateErrors: unknown[];
  /** Releases DATA_DIR (after the database closed). */
  release(): void;
}

/**
 * The first thing `npm start` does once it has its configuration: locks DATA_DIR and sends the
 * open to PGlite's thread, without waiting, so PGlite opens while this thread loads the rest of
 * the product. It loads little for that reason (no store, logger or services). Throws only when
 * the config may not start at all (no API keys beyond loopback), or the folder cannot be made
 * or is locked by another process.
 */
export function openDataDir(
  config: AllInOneConfig,
  /** A PGlite thread started ahead, to open DATA_DIR on (openPgliteFolder's `thread`). */
  thread?: PgliteThread,
): DataDirOpen {
  refuseOpenWithoutAuth(config);
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  // Before PGlite opens the folder: two processes on it would each lose the other's writes.
  const lock = lockDataDir(dataDir);
  const templateErrors: unknown[] = [];
  const opened = openPgliteFolder({
    dataDir,
    // A new folder starts as a copy of a migrated template instead of PGlite's initdb.
    templatesFolder: pgliteTemplatesFolder(config) ?? undefined,
    onTemplateError: (error) => templateErrors.push(error),
    thread,
  });
  return { opened, templateErrors, release: () => lock.release() };
}
