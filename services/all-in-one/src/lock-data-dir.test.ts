import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DATA_DIR_LOCK_FILE, DataDirInUseError, lockDataDir } from './lock-data-dir';

const folders: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function freshFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'chunklog-lock-'));
  folders.push(folder);
  return folder;
}

/** Another process that claims the folder and keeps it until killed. */
async function claimInChild(folder: string): Promise<ChildProcess> {
  const module = pathToFileURL(fileURLToPath(new URL('./lock-data-dir.ts', import.meta.url)));
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import(${JSON.stringify(module.href)}).then((m) => { m.lockDataDir(${JSON.stringify(folder)}); console.log('locked'); setInterval(() => {}, 1000); });`,
    ],
    { cwd: fileURLToPath(new URL('../../..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  child.on('error', () => undefined);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child never locked:\n${output}`)), 60_000);
    const collect = (data: Buffer) => {
      output += data.toString();
      if (output.includes('locked')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('exit', () => reject(new Error(`child exited:\n${output}`)));
  });
  return child;
}

describe('lockDataDir', () => {
  it('refuses a folder another live process holds, naming its pid, and takes it once that process is gone', async () => {
    const folder = freshFolder();
    const child = await claimInChild(folder);
    expect(() => lockDataDir(folder)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(folder)).toThrow(`pid ${child.pid}`);

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // SIGKILL left its file behind: a process that no longer runs holds nothing.
    expect(existsSync(join(folder, DATA_DIR_LOCK_FILE))).toBe(true);
    const lock = lockDataDir(folder);
    expect(readFileSync(join(folder, DATA_DIR_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(join(folder, DATA_DIR_LOCK_FILE))).toBe(false);
  });

  it('refuses a second claim in the same process until the first is released', () => {
    const folder = freshFolder();
    const lock = lockDataDir(folder);
    expect(() => lockDataDir(join(folder, '.'))).toThrow(DataDirInUseError);
    lock.release();
    lock.release();
    lockDataDir(folder).release();
  });

  it("takes over a file naming this process's own pid (a restarted container) or no pid", () => {
    for (const content of [`${process.pid}\n`, 'not a pid\n', '']) {
      const folder = freshFolder();
      writeFileSync(join(folder, DATA_DIR_LOCK_FILE), content);
      lockDataDir(folder).release();
      expect(existsSync(join(folder, DATA_DIR_LOCK_FILE))).toBe(false);
    }
  });

  it('leaves the file alone on release when another process has taken it over', () => {
    const folder = freshFolder();
    const lock = lockDataDir(folder);
    writeFileSync(join(folder, DATA_DIR_LOCK_FILE), '1\n');
    lock.release();
    expect(readFileSync(join(folder, DATA_DIR_LOCK_FILE), 'utf8')).toBe('1\n');
  });
});
