/**
 * `npm run start:worker`: one agent worker process (services mode).
 * Reads the environment, wires Postgres, NATS and the Anthropic client, and shuts down
 * gracefully on SIGINT/SIGTERM (running turns get a few seconds, then a takeover).
 */
import { hostname } from 'node:os';
import Anthropic from '@anthropic-ai/sdk';
import { createNatsBus } from '@chunklog/bus';
import { describeError } from '@chunklog/chunk-core';
import { createPostgresStore } from '@chunklog/store';
import { pino } from 'pino';
import { modelClientOptions, parseWorkerConfig } from './config/worker-config';
import { serveWorkerMetrics } from './metrics/metrics-server';
import { createWorkerMetrics } from './metrics/worker-metrics';
import { createWorker } from './worker';

const config = (() => {
  try {
    return parseWorkerConfig(process.env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
})();
const workerId = config.WORKER_ID ?? `${hostname()}-${process.pid}`;
const logger = pino({ level: config.LOG_LEVEL, base: { service: 'agent-worker' } });

/** A start-up step that failed ends the process with one line naming what it needed. */
async function startStep<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    console.error(`chunklog worker failed to start: ${what}: ${describeError(error)}`);
    process.exit(1);
  }
}

const store = createPostgresStore({ url: config.DATABASE_URL });
await startStep('Postgres (DATABASE_URL)', () => store.migrate());
const bus = await startStep('NATS (NATS_URL)', () =>
  createNatsBus({
    servers: config.NATS_URL,
    name: `chunklog-worker-${workerId}`,
    ...(config.NATS_SUBJECT_PREFIX ? { subjectPrefix: config.NATS_SUBJECT_PREFIX } : {}),
  }),
);
const anthropic = new Anthropic({
  ...modelClientOptions(config),
  // The worker owns retries (backoff honouring retry-after, mid-stream errors included).
  maxRetries: 0,
});
const metrics = createWorkerMetrics();
const worker = createWorker({
  store,
  bus,
  anthropic,
  workerId,
  leaseMs: config.LEASE_MS,
  maxSteps: config.MAX_STEPS,
  maxTokens: config.MAX_TOKENS,
  model: config.MODEL,
  logger,
  metrics,
});
await worker.start();
const metricsServer =
  config.METRICS_PORT === undefined
    ? null
    : await serveWorkerMetrics({
        registry: metrics.registry,
        health: () => worker.health(),
        host: config.METRICS_HOST,
        port: config.METRICS_PORT,
      });
if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, 'metrics served');
logger.info({ workerId, model: config.MODEL, leaseMs: config.LEASE_MS }, 'agent worker ready');

let shuttingDown = false;
async function shutdown(signal: string): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  logger.info({ signal }, 'shutting down');
  try {
    await worker.stop();
    await metricsServer?.close();
    await bus.close();
    await store.close();
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
