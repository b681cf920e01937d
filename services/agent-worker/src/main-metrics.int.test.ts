import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type Harness, startWorkerProcess, useHarness } from './testing/harness';
import { parseExposition } from './testing/parse-exposition';

const getHarness = useHarness();

/** `npm run start:worker` with METRICS_PORT=0; resolves with the metrics URL it logged. */
async function startChildWorker(h: Harness): Promise<{ worker: ChildProcess; metricsUrl: string }> {
  const { worker, readyLine } = await startWorkerProcess(
    h,
    { WORKER_ID: 'metrics-child', METRICS_PORT: '0' },
    /"msg":"metrics served"/,
  );
  return { worker, metricsUrl: (JSON.parse(readyLine) as { url: string }).url };
}

describe('npm run start:worker with METRICS_PORT', () => {
  it('serves the figures of the turns it ran on GET /metrics, and stops serving on SIGTERM', async (context) => {
    const harness = getHarness(context);
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
    // The store's group commit reports on the same registry: every append went through a batch.
    expect(series.get('chunklog_store_append_batch_size_sum')).toBe(log.length);
    expect(series.get('chunklog_store_append_batch_duration_seconds_count')).toBe(
      series.get('chunklog_store_append_batch_size_count'),
    );
    expect(series.get('chunklog_worker_turns_total{reason="completed"}')).toBe(1);
    // What every process reports about itself: its build and the default process metrics.
    expect(series.get(`chunklog_build_info{version="0.1.0",node="${process.version}"}`)).toBe(1);
    expect(series.get('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(series.get('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    const health = await fetch(metricsUrl.replace('/metrics', '/healthz'));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', store: 'reachable', bus: 'reachable' });

    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});
