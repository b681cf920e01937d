import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExposition } from '../testing/parse-exposition';
import { type ConnectionHealth, type MetricsServer, serveWorkerMetrics } from './metrics-server';
import { createWorkerMetrics, type WorkerMetrics } from './worker-metrics';

let metrics: WorkerMetrics;
let server: MetricsServer;
beforeAll(async () => {
  metrics = createWorkerMetrics(new Registry());
  server = await serveWorkerMetrics({ registry: metrics.registry, host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await server.close();
});

describe('the worker metrics server (METRICS_PORT)', () => {
  it('serves the registry as Prometheus text on GET /metrics, current at each scrape', async () => {
    metrics.appendSeconds.observe(0.002);
    metrics.takeovers.inc();
    const first = await fetch(`${server.url}/metrics`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/plain');
    const series = parseExposition(await first.text());
    expect(series.get('chunklog_worker_append_seconds_count')).toBe(1);
    expect(series.get('chunklog_worker_append_seconds_bucket{le="0.0025"}')).toBe(1);
    expect(series.get('chunklog_worker_append_seconds_bucket{le="0.001"}')).toBe(0);
    expect(series.get('chunklog_worker_takeovers_total')).toBe(1);

    metrics.takeovers.inc();
    const second = parseExposition(await (await fetch(`${server.url}/metrics`)).text());
    expect(second.get('chunklog_worker_takeovers_total')).toBe(2);
  });

  it('answers /healthz, 404 for other paths and 405 for other methods', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    // The same body as the gateway's /healthz.
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${server.url}/metrics/extra`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('answers 503 on /healthz and /readyz while the store or the bus is unreachable, naming which', async () => {
    let health: ConnectionHealth = { store: 'reachable', bus: 'reachable' };
    const withHealth = await serveWorkerMetrics({
      registry: new Registry(),
      host: '127.0.0.1',
      port: 0,
      health: async () => health,
    });
    try {
      for (const path of ['/healthz', '/readyz']) {
        health = { store: 'reachable', bus: 'reachable' };
        const ready = await fetch(`${withHealth.url}${path}`);
        expect(ready.status, path).toBe(200);
        expect(await ready.json()).toEqual({ status: 'ok', ...health });
        health = { store: 'unreachable', bus: 'reachable', unreachableForMs: 1_500 };
        const noStore = await fetch(`${withHealth.url}${path}`);
        expect(noStore.status, path).toBe(503);
        expect(await noStore.json()).toEqual({ status: 'unavailable', ...health });
        health = { store: 'reachable', bus: 'unreachable' };
        const noBus = await fetch(`${withHealth.url}${path}`);
        expect(noBus.status, path).toBe(503);
        expect(await noBus.json()).toEqual({ status: 'unavailable', ...health });
      }
    } finally {
      await withHealth.close();
    }
  });

  it('stops listening on close, even with a kept-alive scraper connection', async () => {
    const own = await serveWorkerMetrics({
      registry: metrics.registry,
      host: '127.0.0.1',
      port: 0,
    });
    expect((await fetch(`${own.url}/metrics`)).status).toBe(200);
    const started = Date.now();
    await own.close();
    // Well under the 5 s keep-alive timeout it would otherwise wait for, with room for a loaded CI.
    expect(Date.now() - started).toBeLessThan(3_000);
    await expect(fetch(`${own.url}/metrics`)).rejects.toThrow();
  });
});
