/**
 * A chunklog entry point (`npm run start:gateway`, `npm run start:worker`) run as a real child
 * process, the way the services mode and docker-compose run it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sleep } from '@chunklog/test-infra';

export const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Keeps the last part of a child's output: enough to explain a failure, bounded in memory. */
const OUTPUT_LIMIT = 64 * 1024;

export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The tail of the process's stdout and stderr, for failure messages. */
  output(): string;
  /** Resolves once the output contains the text (checks what already arrived too). */
  waitForOutput(text: string, timeoutMs: number): Promise<void>;
  /** True while the process runs. */
  running(): boolean;
  /** Sends the signal and waits for the exit; SIGKILL after `graceMs` if it is still running. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/** Spawns `tsx <entry>` from the repository root with the given environment added. */
export function startServiceProcess(input: {
  name: string;
  entry: string;
  environment: Record<string, string>;
}): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', input.entry], {
    cwd: repositoryRoot,
    env: { ...process.env, ...input.environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const watchers = new Set<() => void>();
  const collect = (data: Buffer) => {
    output += data.toString();
    if (output.length > OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
    for (const watcher of watchers) watcher();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const running = () => child.exitCode === null && child.signalCode === null;
  // If the test process ends without afterAll (a crash, a worker timeout), take the child along.
  const killOnExit = () => {
    if (running()) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    }),
  );

  return {
    name: input.name,
    child,
    output: () => output,
    running,
    waitForOutput(text, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (output.includes(text)) {
            finish();
            resolve();
          } else if (!running()) {
            finish();
            reject(new Error(`${input.name} exited before "${text}":\n${output}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`${input.name} did not print "${text}" in ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          watchers.delete(check);
          child.off('exit', check);
        };
        watchers.add(check);
        child.on('exit', check);
        check();
      });
    },
    async stop(signal = 'SIGTERM', graceMs = 5_000) {
      if (!running()) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls the gateway's `/readyz` until it answers 200 (database and bus reachable). */
export async function waitUntilReady(
  service: ServiceProcess,
  baseUrl: string,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!service.running()) {
      throw new Error(`${service.name} exited before it was ready:\n${service.output()}`);
    }
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(
    `${service.name} not ready at ${baseUrl} in ${timeoutMs} ms:\n${service.output()}`,
  );
}
