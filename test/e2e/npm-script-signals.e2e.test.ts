/**
 * `docker stop`, a process manager or `kill` sends SIGTERM to the process it started: `npm`
 * (the image's CMD and every compose command is an npm script). npm passes it to the script's
 * shell, and a shell that does not hand it on dies alone: the service it started keeps running
 * (outside Docker, orphaned; inside, killed without its graceful shutdown when the container
 * goes). The long-lived scripts `exec` their command so the service itself gets the signal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repositoryRoot } from './service-process';

const started: ChildProcess[] = [];

afterEach(() => {
  // The script runs in its own process group: whatever is left of it goes.
  for (const child of started.splice(0)) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
});

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

describe('npm scripts and signals', () => {
  it('stops the simulator when `npm run sim` gets SIGTERM', async () => {
    const child = spawn('npm', ['run', 'sim'], {
      cwd: repositoryRoot,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    started.push(child);
    child.on('error', () => undefined);
    let output = '';
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL in 60 s:\n${output}`)), 60_000);
      const collect = (data: Buffer) => {
        output += data.toString();
        // The simulator logs JSON lines; the one saying it listens carries its url.
        const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
    });
    expect(await answers(url)).toBe(true);

    child.kill('SIGTERM');
    await exited;
    const deadline = Date.now() + 30_000;
    let stillServing = await answers(url);
    while (stillServing && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      stillServing = await answers(url);
    }
    expect(stillServing, `the simulator outlived npm:\n${output}`).toBe(false);
  });

  it('runs every long-lived script with exec, as `sim` is above', () => {
    const manifest = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const name of ['start', 'start:gateway', 'start:worker', 'sim']) {
      expect(manifest.scripts[name], name).toMatch(/^exec node /);
    }
  });
});
