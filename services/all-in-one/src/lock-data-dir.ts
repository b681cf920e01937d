import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The file in DATA_DIR that names the process using it. */
export const DATA_DIR_LOCK_FILE = 'chunklog.pid';

/** Another live process (or this one) already uses the data folder. */
export class DataDirInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  /** Gives the folder up; safe to call twice. */
  release(): void;
}

// Folders locked by this process: a second start in the same process has the same pid.
const heldByThisProcess = new Set<string>();

/**
 * Claims DATA_DIR for this process. PGlite is one Postgres over plain files with no lock of its
 * own: two processes on one folder each see only their own writes and the last to write wins,
 * so a second `npm start` on the same folder must stop before it opens the database. The claim
 * is a file holding the pid, created exclusively; one left by a process that no longer runs (a
 * crash, SIGKILL, a container restart) is taken over.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const folder = resolve(dataDir);
  const path = join(folder, DATA_DIR_LOCK_FILE);
  if (heldByThisProcess.has(folder)) {
    throw new DataDirInUseError(`DATA_DIR ${folder} is already in use by this process`);
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      heldByThisProcess.add(folder);
      return { release: () => release(folder, path) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(path);
    if (owner !== null && owner !== process.pid && isRunning(owner)) {
      throw new DataDirInUseError(
        `DATA_DIR ${folder} is in use by another chunklog process (pid ${owner}): stop it, or ` +
          `set DATA_DIR to another folder (if no chunklog runs there, delete ${path})`,
      );
    }
    removeIfPresent(path);
  }
  throw new DataDirInUseError(`DATA_DIR ${folder}: another process keeps claiming ${path}`);
}

function release(folder: string, path: string): void {
  if (!heldByThisProcess.delete(folder)) return;
  // Only our own claim: a folder taken over after we were presumed dead is not ours to free.
  if (readOwner(path) === process.pid) removeIfPresent(path);
}

function readOwner(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
