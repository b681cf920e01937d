import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
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

/** What a claim file says: the pid (first line) and, on Linux, when that process started. */
interface Claim {
  pid: number;
  started: string | null;
}

// Folders locked by this process: a second start in the same process has the same pid.
const heldByThisProcess = new Set<string>();

/**
 * Claims DATA_DIR for this process: PGlite has no lock of its own, and two processes on one
 * folder would each see only their own writes. The claim is a pid file (with the process's
 * start time where /proc has it, against pid reuse) linked into place whole; one left by a dead
 * process is taken over under a second file, so two starts on a stale claim cannot both win.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const folder = canonical(dataDir);
  const path = join(folder, DATA_DIR_LOCK_FILE);
  const guard = `${path}.takeover`;
  if (heldByThisProcess.has(folder)) {
    throw new DataDirInUseError(`DATA_DIR ${folder} is already in use by this process`);
  }
  const content = claimContent();
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createExclusive(path, content)) {
      heldByThisProcess.add(folder);
      return { release: () => release(folder, path) };
    }
    refuseIfLive(folder, path, readClaim(path));
    // Stale: taken over under the guard, so only one process removes it and claims the folder.
    if (!createExclusive(guard, content)) {
      const taker = readClaim(guard);
      if (taker !== null && taker.pid !== process.pid && isRunning(taker)) {
        throw new DataDirInUseError(
          `DATA_DIR ${folder} is being claimed by another chunklog process (pid ${taker.pid})`,
        );
      }
      // Left by a process that died in the middle of a take-over.
      removeIfPresent(guard);
      continue;
    }
    try {
      // Read again under the guard: another process may have taken it over meanwhile.
      refuseIfLive(folder, path, readClaim(path));
      removeIfPresent(path);
      if (createExclusive(path, content)) {
        heldByThisProcess.add(folder);
        return { release: () => release(folder, path) };
      }
      // Another process created it between the two calls above: the next attempt reads it.
    } finally {
      if (readFileOrNull(guard) === content) removeIfPresent(guard);
    }
  }
  throw new DataDirInUseError(`DATA_DIR ${folder}: another process keeps claiming ${path}`);
}

/** The folder's own path (symbolic links resolved), so two paths to it are one claim. */
function canonical(dataDir: string): string {
  const resolved = resolve(dataDir);
  try {
    return realpathSync(resolved);
  } catch {
    return resolved;
  }
}

function refuseIfLive(folder: string, path: string, owner: Claim | null): void {
  if (owner === null) return;
  if (owner.pid === process.pid) {
    // This pid with this process's start time: a claim this process made (through another path
    // to the folder). Without a start time, or with another, one left by an earlier run.
    if (owner.started !== null && owner.started === startTimeOf(process.pid)) {
      throw new DataDirInUseError(`DATA_DIR ${folder} is already in use by this process`);
    }
    return;
  }
  if (isRunning(owner)) {
    throw new DataDirInUseError(
      `DATA_DIR ${folder} is in use by another chunklog process (pid ${owner.pid}): stop it, or ` +
        `set DATA_DIR to another folder (if no chunklog runs there, delete ${path})`,
    );
  }
}

function release(folder: string, path: string): void {
  if (!heldByThisProcess.delete(folder)) return;
  // Only our own claim: a folder taken over after we were presumed dead is not ours to free.
  if (readClaim(path)?.pid === process.pid) removeIfPresent(path);
}

function claimContent(): string {
  const started = startTimeOf(process.pid);
  return `${process.pid}\n${started === null ? '' : `start ${started}\n`}`;
}

/**
 * Creates `path` holding `content`, or returns false when it exists. The content is written to
 * a file of its own first and linked into place, so the file never exists empty.
 */
function createExclusive(path: string, content: string): boolean {
  const draft = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(draft, content, { flag: 'wx' });
  try {
    linkSync(draft, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A file system without hard links: an exclusive create, written right after.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS' || code === 'EOPNOTSUPP') {
      try {
        writeFileSync(path, content, { flag: 'wx' });
        return true;
      } catch (fallbackError) {
        if ((fallbackError as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw fallbackError;
      }
    }
    throw error;
  } finally {
    removeIfPresent(draft);
  }
}

function readFileOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function readClaim(path: string): Claim | null {
  const text = readFileOrNull(path);
  if (text === null) return null;
  const [first = '', ...rest] = text.split('\n');
  const pid = Number.parseInt(first.trim(), 10);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  const started = rest
    .find((line) => line.startsWith('start '))
    ?.slice('start '.length)
    .trim();
  return { pid, started: started || null };
}

function isRunning(claim: Claim): boolean {
  try {
    process.kill(claim.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // The pid runs; it is the claimant unless it started at another time (the pid was reused).
  if (claim.started === null) return true;
  const started = startTimeOf(claim.pid);
  return started === null || started === claim.started;
}

/** The process's start time in clock ticks since boot (Linux /proc), or null where unknown. */
function startTimeOf(pid: number): string | null {
  const stat = readFileOrNull(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces: fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
