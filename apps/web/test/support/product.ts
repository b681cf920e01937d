/**
 * The product as the README starts it: `npm start` (which builds the app if it changed, then
 * runs the all-in-one process) on a free port with its own data folder, in its own process
 * group so a test can stop it and everything it started.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@chunklog/test-infra';

export const repositoryRoot = fileURLToPath(new URL('../../../..', import.meta.url));

export interface Product {
  url: string;
  dataDir: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startProduct(
  options: { dataDir?: string; environment?: Record<string, string> } = {},
): Promise<Product> {
  const port = await freePort();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'chunklog-web-'));
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...options.environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const collect = (data: Buffer) => {
    output = (output + data.toString()).slice(-64 * 1024);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let stopping = false;
  child.once('exit', (code, signal) => {
    // A product that dies under a test explains itself in the test's output.
    if (!stopping)
      console.error(`npm start exited (${signal ?? code}) during the tests:\n${output}`);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {}
  };
  const killOnExit = () => killGroup('SIGKILL');
  process.once('exit', killOnExit);

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
    if (Date.now() > deadline) {
      killGroup('SIGKILL');
      throw new Error(`npm start did not serve ${url} in 120 s:\n${output}`);
    }
    if (output.includes('chunklog is running at')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    dataDir,
    output: () => output,
    async stop() {
      stopping = true;
      killGroup('SIGTERM');
      const timer = setTimeout(() => killGroup('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      process.off('exit', killOnExit);
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
