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
 * Locks DATA_DIR and sends PGlite's thread the open without waiting, so the database opens
 * while this thread loads the rest (hence so few imports here). Throws when the config may not
 * start, or the folder cannot be made or is locked by another process.
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
