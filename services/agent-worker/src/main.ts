/**
 * `npm run start:worker`: one agent worker process (services mode).
 * Reads the environment, wires Postgres, NATS and the Anthropic client, and shuts down
 * gracefully on SIGINT/SIGTERM (running turns get most of SHUTDOWN_TIMEOUT_MS, then are left
 * to a takeover).
 */

import { hostname } from 'node:os';
import Anthropic from '@anthropic-ai/sdk';
import { createNatsBus } from '@chunklog/bus';
import {
  chunklogVersion,
  createLogger,
  registerProcessMetrics,
  runUntilSignal,
  startStep,
  startTracing,
} from '@chunklog/runtime';
import { approvalPolicyFromEnv } from '@chunklog/runtime/env';
import { createPostgresStore } from '@chunklog/store';
import { modelClientOptions, parseWorkerConfig, retryPolicyOf } from './config/worker-config';
import { serveWorkerMetrics } from './metrics/metrics-server';
import { createWorkerMetrics } from './metrics/worker-metrics';
import { webhookDispatchOptions } from './webhooks/webhook-dispatch-options';
import { createWorker } from './worker';

const SERVICE = 'worker';

const config = await startStep(SERVICE, 'environment', () => parseWorkerConfig(process.env));
const workerId = config.WORKER_ID ?? `${hostname()}-${process.pid}`;
const logger = createLogger({ service: 'agent-worker', level: config.LOG_LEVEL });
// First: everything built after this traces into it (docs/architecture.md, "Tracing").
const tracing = await startTracing({ serviceName: 'chunklog-worker' });

// One registry: the worker's figures and the store's group-commit histograms on one /metrics.
const metrics = createWorkerMetrics();
registerProcessMetrics(metrics.registry, { version: chunklogVersion() });
const store = createPostgresStore({ url: config.DATABASE_URL, metricsRegistry: metrics.registry });
await startStep(SERVICE, 'Postgres (DATABASE_URL)', () => store.migrate());
const bus = await startStep(SERVICE, 'NATS (NATS_URL)', () =>
  createNatsBus({
    servers: config.NATS_URL,
    streamReplicas: config.NATS_STREAM_REPLICAS,
    name: `chunklog-worker-${workerId}`,
    logger: logger.child({ component: 'bus' }),
    ...(config.NATS_SUBJECT_PREFIX ? { subjectPrefix: config.NATS_SUBJECT_PREFIX } : {}),
  }),
);
const anthropic = new Anthropic({
  ...modelClientOptions(config),
  // The worker owns retries (backoff honouring retry-after, mid-stream errors included).
  maxRetries: 0,
});
const worker = createWorker({
  store,
  bus,
  anthropic,
  workerId,
  leaseMs: config.LEASE_MS,
  maxSteps: config.MAX_STEPS,
  approval: approvalPolicyFromEnv(config),
  retry: retryPolicyOf(config),
  maxTokens: config.MAX_TOKENS,
  model: config.MODEL,
  contextWindowTokens: config.CONTEXT_WINDOW_TOKENS,
  compactionThreshold: config.COMPACTION_THRESHOLD,
  mcp: {
    servers: config.MCP_SERVERS ?? [],
    tabHosts: config.MCP_TAB_HOSTS,
    // Services mode always has auth (API keys): a secret without `_TENANTS` is for no tenant.
    unlistedSecretsTenant: null,
  },
  logger,
  metrics,
  webhooks: webhookDispatchOptions(config),
  // Running turns get most of the shutdown time; what is left closes the connections.
  stopTimeoutMs: Math.max(0, config.SHUTDOWN_TIMEOUT_MS - 2_000),
});
await worker.start();
const metricsServer =
  config.METRICS_PORT === undefined
    ? null
    : await startStep(SERVICE, 'metrics server (METRICS_PORT)', () =>
        serveWorkerMetrics({
          registry: metrics.registry,
          // The store's state comes from the worker's own calls (its lease sweep queries the
          // store every LEASE_MS / 4); the bus answers a round trip.
          health: async () => ({
            ...worker.health(),
            bus: (await bus.ready()) ? 'reachable' : 'unreachable',
          }),
          host: config.METRICS_HOST,
          port: config.METRICS_PORT!,
        }),
      );
if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, 'metrics served');
logger.info(
  {
    workerId,
    model: config.MODEL,
    leaseMs: config.LEASE_MS,
    tracing: tracing.enabled ? 'on' : `off (${tracing.offReason})`,
  },
  'agent worker ready',
);

void runUntilSignal({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  async stop() {
    await worker.stop();
    await metricsServer?.close();
    await bus.close();
    await store.close();
    await tracing.shutdown();
  },
});
