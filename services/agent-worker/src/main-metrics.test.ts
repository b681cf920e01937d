import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExposition } from './parse-exposition';
import { createHarness, type Harness } from './worker-test-harness';

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));
let harness: Harness | null;
let child: ChildProcess | undefined;

beforeAll(async () => {
  harness = await createHarness('nats');
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await harness?.close();
});

/** `npm run start:worker` as a child process with METRICS_PORT=0; resolves with the metrics URL. */
function startChildWorker(h: Harness): Promise<{ worker: ChildProcess; metricsUrl: string }> {
  const worker = spawn(process.execPath, ['--import', 'tsx', 'services/agent-worker/src/main.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      NATS_URL: h.natsUrl!,
      NATS_SUBJECT_PREFIX: h.subjectPrefix!,
      SIMULATOR_URL: h.simulator.url,
      WORKER_ID: 'metrics-child',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child = worker;
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no metrics server:\n${output}`)), 30_000);
    worker.stderr!.on('data', (data: Buffer) => {
      output += data.toString();
      const served = /^.*"message":"metrics served".*$/m.exec(output);
      if (served) {
        clearTimeout(timer);
        resolve({ worker, metricsUrl: (JSON.parse(served[0]) as { url: string }).url });
      }
    });
    worker.once('exit', (code) => reject(new Error(`worker exited with ${code}:\n${output}`)));
  });
}

describe('npm run start:worker with METRICS_PORT', () => {
  it('serves the figures of the turns it ran on GET /metrics, and stops serving on SIGTERM', async (context) => {
    if (!harness) return context.skip();
    const { worker, metricsUrl } = await startChildWorker(harness);
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    const tab = await harness.newTab();
    await harness.send(tab.id, 'count me [[sim: words 5]]');
    await harness.turnsDone(tab.id, 1);
    const log = await harness.store.readAll(tab.id);

    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    const series = parseExposition(await response.text());
    expect(series.get('chunklog_worker_append_seconds_count')).toBe(log.length);
    expect(series.get('chunklog_worker_turns_total{reason="completed"}')).toBe(1);
    expect((await fetch(metricsUrl.replace('/metrics', '/healthz'))).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});
