import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';

/**
 * Adds what every chunklog process reports about itself to `registry`: prom-client's default
 * process metrics (CPU, resident memory, heap spaces, event-loop lag, GC durations, open handles)
 * and `chunklog_build_info{version,node}`, always 1, naming what runs. Call once per registry,
 * from the process's main: a registry shared by the services of one process gets them once.
 */
export function registerProcessMetrics(registry: Registry, build: { version: string }): void {
  collectDefaultMetrics({ register: registry });
  const buildInfo = new Gauge({
    name: 'chunklog_build_info',
    help: 'The chunklog version and Node.js version this process runs; always 1',
    labelNames: ['version', 'node'],
    registers: [registry],
  });
  buildInfo.set({ version: build.version, node: process.version }, 1);
}
