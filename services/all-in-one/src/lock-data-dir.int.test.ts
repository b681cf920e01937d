import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
    expect(readFileSync(join(folder, DATA_DIR_LOCK_FILE), 'utf8').split('\n')[0]).toBe(
      String(process.pid),
    );
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

/** A pid no process has: a child that ran and exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  child.on('error', () => undefined);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('lockDataDir, claimed by several processes at once', () => {
  it('gives each folder to exactly one of the processes that start on it at the same moment', async () => {
    // Every round: a folder holding a stale claim (or none), and every child trying it at the
    // same instant; a take-over must not remove a claim another child has just made.
    const rounds = 12;
    const stale = await deadPid();
    const roundFolders = Array.from({ length: rounds }, (_, round) => {
      const folder = freshFolder();
      if (round % 4 !== 3) writeFileSync(join(folder, DATA_DIR_LOCK_FILE), `${stale}\n`);
      return folder;
    });
    const module = pathToFileURL(fileURLToPath(new URL('./lock-data-dir.ts', import.meta.url)));
    const script = `
      const m = await import(${JSON.stringify(module.href)});
      const folders = ${JSON.stringify(roundFolders)};
      console.log('ready');
      const start = Number(await new Promise((resolve) => process.stdin.once('data', resolve)));
      for (const [round, folder] of folders.entries()) {
        const at = start + round * 150;
        // Sleep until just before the moment, then spin to it, so every child tries at once.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now() - 20)));
        while (Date.now() < at) {}
        try { m.lockDataDir(folder); console.log('won ' + round); }
        catch (error) { if (!(error instanceof m.DataDirInUseError)) console.log('error ' + error); }
      }
      console.log('done');
      setInterval(() => {}, 1000);`;
    const contenders = 4;
    const outputs: string[] = Array.from({ length: contenders }, () => '');
    const racers = Array.from({ length: contenders }, (_, index) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        {
          cwd: fileURLToPath(new URL('../../..', import.meta.url)),
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      children.push(child);
      child.on('error', () => undefined);
      child.stdin?.on('error', () => undefined);
      const collect = (data: Buffer) => {
        outputs[index] += data.toString();
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      return child;
    });
    const waitFor = async (word: string) => {
      const deadline = Date.now() + 120_000;
      while (!outputs.every((output) => output.includes(word))) {
        if (Date.now() > deadline)
          throw new Error(`children never said ${word}:\n${outputs.join('\n')}`);
        if (racers.some((child) => child.exitCode !== null)) {
          throw new Error(`a child exited:\n${outputs.join('\n')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await waitFor('ready');
    const start = Date.now() + 500;
    for (const child of racers) child.stdin?.write(`${start}\n`);
    await waitFor('done');
    expect(outputs.join('\n')).not.toContain('error ');
    for (let round = 0; round < rounds; round++) {
      const winners = outputs.filter((output) => output.split('\n').includes(`won ${round}`));
      expect(winners.length, `round ${round}:\n${outputs.join('\n')}`).toBe(1);
    }
    // Four processes load TypeScript at once: slow on a loaded two-core machine.
  }, 300_000);
});

describe.runIf(existsSync('/proc/self/stat'))('lockDataDir and a pid the system gave again', () => {
  it('takes over a claim whose pid now names a process started after the claimant (Linux)', () => {
    // The parent runs, and is not this process: as a container restarted on a kept volume,
    // where the old claimant's pid is another process's now.
    const live = process.ppid;
    const folder = freshFolder();
    writeFileSync(join(folder, DATA_DIR_LOCK_FILE), `${live}\nstart 1\n`);
    const lock = lockDataDir(folder);
    expect(readFileSync(join(folder, DATA_DIR_LOCK_FILE), 'utf8').split('\n')[0]).toBe(
      String(process.pid),
    );
    lock.release();
  });

  it('still refuses the live claimant itself, its start time recorded', () => {
    const live = process.ppid;
    const started = readFileSync(`/proc/${live}/stat`, 'utf8')
      .slice(readFileSync(`/proc/${live}/stat`, 'utf8').lastIndexOf(')') + 2)
      .split(' ')[19];
    const folder = freshFolder();
    writeFileSync(join(folder, DATA_DIR_LOCK_FILE), `${live}\nstart ${started}\n`);
    expect(() => lockDataDir(folder)).toThrow(`pid ${live}`);
  });
});

describe('lockDataDir take-over guard', () => {
  it('clears a guard left by a process that died during a take-over, and refuses while a live one holds it', async () => {
    const stale = await deadPid();
    const folder = freshFolder();
    const guard = join(folder, `${DATA_DIR_LOCK_FILE}.takeover`);
    writeFileSync(join(folder, DATA_DIR_LOCK_FILE), `${stale}\n`);
    // A live process (the parent) is taking the stale claim over right now.
    writeFileSync(guard, `${process.ppid}\n`);
    expect(() => lockDataDir(folder)).toThrow(`pid ${process.ppid}`);
    // It died doing so.
    writeFileSync(guard, `${stale}\n`);
    const lock = lockDataDir(folder);
    expect(existsSync(guard)).toBe(false);
    lock.release();
    expect(existsSync(join(folder, DATA_DIR_LOCK_FILE))).toBe(false);
  });
});

describe('lockDataDir through another path', () => {
  it('refuses a second claim in the same process made through a symbolic link to the folder', () => {
    const folder = freshFolder();
    const link = `${folder}-link`;
    symlinkSync(folder, link);
    folders.push(link);
    const lock = lockDataDir(folder);
    // The file names this process: a claim of its own, not one left by an earlier run.
    expect(() => lockDataDir(link)).toThrow(DataDirInUseError);
    lock.release();
    lockDataDir(link).release();
  });
});
