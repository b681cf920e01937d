import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const runtime = new URL('./index.ts', import.meta.url).href;

/** Runs a main built on the runtime package in a real process; its exit code and output. */
function runMain(body: string, afterStart?: (pid: number) => void) {
  const script = `import * as runtime from ${JSON.stringify(runtime)};\n${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (part: Buffer) => {
    stdout += part;
    if (stdout.includes('"msg":"ready"') && afterStart && child.pid !== undefined) {
      const pid = child.pid;
      afterStart = undefined;
      process.kill(pid, 'SIGTERM');
    }
  });
  child.stderr.on('data', (part: Buffer) => {
    stderr += part;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a main on the runtime package, as a real process', () => {
  it('stops on SIGTERM after closing what it opened, exit code 0, JSON lines on stdout', async () => {
    const { code, stdout, stderr } = await runMain(
      `const logger = runtime.createLogger({ service: 'demo' });
       const timer = setInterval(() => {}, 1000);
       void runtime.runUntilSignal({ logger, stop: async () => { clearInterval(timer); logger.info('closed'); } });
       logger.info('ready');`,
      () => {},
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; service: string; signal?: string });
    expect(lines.map((line) => line.msg)).toEqual(['ready', 'shutting down', 'closed', 'stopped']);
    expect(lines[1]).toMatchObject({ service: 'demo', signal: 'SIGTERM' });
  });

  it('exits 1 with the one start-up failure line on stderr when a step fails', async () => {
    const { code, stdout, stderr } = await runMain(
      `const { z } = await import('zod');
       const env = await runtime.startStep('demo', 'environment', () =>
         runtime.parseEnv(z.object(runtime.natsEnv), {}));
       console.log('unreachable', env);`,
    );
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'chunklog demo failed to start: environment: NATS_URL: required, e.g. nats://127.0.0.1:4222\n',
    );
  });
});
