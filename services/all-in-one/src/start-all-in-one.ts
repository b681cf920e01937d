import { randomBytes } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { createWorker, createWorkerMetrics, webhookDispatchOptions } from '@chunklog/agent-worker';
import { retryPolicyOf } from '@chunklog/agent-worker/config';
import { createSimulator, type Simulator } from '@chunklog/anthropic-sim';
import { createMemoryBus } from '@chunklog/bus/memory';
import { LOCAL_TENANT_NAME } from '@chunklog/chunk-core';
import { bootstrapApiKeys, createGateway } from '@chunklog/gateway';
import { gatewayLimitsOf } from '@chunklog/gateway/config';
import { chunklogVersion, createLogger, registerProcessMetrics } from '@chunklog/runtime';
import { approvalPolicyFromEnv } from '@chunklog/runtime/env';
import type { Logger } from 'pino';
import { type AllInOneConfig, mcpTabHostsOf } from './all-in-one-config';
import { type AllInOneDatabase, openAllInOneDatabase } from './open-database';
import type { StartTimeline } from './start-timeline';

export interface AllInOne {
  /** The gateway's base URL. */
  url: string;
  /** True when requests need no API key. */
  authOff: boolean;
  /** The simulator's URL when it stands in for the model. */
  simulatorUrl: string | null;
  close(): Promise<void>;
}

export interface AllInOneDependencies {
  /** The process's logger, without a `service` binding: each service gets a child naming it. */
  logger?: Logger;
  /** Told when each start-up step finishes (the process's debug line of where time went). */
  timeline?: StartTimeline;
  /**
   * The database, already opening (openAllInOneDatabase): `npm start` opens it before loading
   * the services' modules. Absent: opened here. Closed by the returned close(), or on failure.
   */
  database?: AllInOneDatabase;
}

/**
 * The whole product in one process: the gateway, one worker, PGlite under DATA_DIR, the
 * in-process bus and, unless ANTHROPIC_API_KEY is set, the simulator as the model.
 */
export async function startAllInOne(
  config: AllInOneConfig,
  dependencies: AllInOneDependencies = {},
): Promise<AllInOne> {
  const logger = dependencies.logger ?? createLogger({ level: config.LOG_LEVEL });
  const authOff = !config.API_KEYS;
  const mcpTabHosts = mcpTabHostsOf(config);
  const opened = dependencies.database ?? openAllInOneDatabase(config, logger);
  const { store } = opened;
  // One registry for the worker, the store and the gateway: its /metrics then shows the worker's
  // figures (append latency above all) and the store's group commit too. Worker names are
  // prefixed chunklog_worker_ and the store's chunklog_store_, so none collide.
  const metrics = createWorkerMetrics(opened.metricsRegistry);
  registerProcessMetrics(metrics.registry, { version: chunklogVersion() });
  const closers: Array<() => Promise<void>> = [() => opened.close()];
  const close = async () => {
    // Last started, first closed; a copy, so a second close() keeps the same order.
    for (const closer of [...closers].reverse()) await closer().catch(() => {});
  };
  const timeline = dependencies.timeline;
  // PGlite opens (on its own thread) and migrates while the services below are built: none of
  // them asks the database before the worker starts.
  const database = (async () => {
    await opened.migrated;
    timeline?.mark('database open and migrated');
    await bootstrapApiKeys(store, config.API_KEYS);
  })();
  // Awaited before anything needs it, and on every failure path below.
  database.catch(() => {});
  try {
    const bus = createMemoryBus({
      logger: logger.child({ service: 'all-in-one', component: 'bus' }),
    });
    closers.push(() => bus.close());

    let simulator: Simulator | null = null;
    if (!config.ANTHROPIC_API_KEY) {
      const simulatorLogger = logger.child({ service: 'anthropic-sim' });
      // One line per model request: detail for debugging, not for a normal run's log.
      simulator = await createSimulator({
        logger: (line) => simulatorLogger.debug(line),
        onInternalError: (error) => simulatorLogger.error({ err: error }, 'simulator failed'),
      });
      const started = simulator;
      closers.push(() => started.close());
    }
    const anthropic = new Anthropic({
      apiKey: config.ANTHROPIC_API_KEY ?? 'simulator',
      baseURL: simulator?.url ?? config.ANTHROPIC_BASE_URL ?? null,
      maxRetries: 0,
    });

    const worker = createWorker({
      store,
      bus,
      anthropic,
      workerId: `all-in-one-${process.pid}`,
      leaseMs: 15_000,
      maxSteps: config.MAX_STEPS,
      approval: approvalPolicyFromEnv(config),
      retry: retryPolicyOf(config),
      maxTokens: config.MAX_TOKENS,
      model: config.MODEL,
      mcp: {
        servers: config.MCP_SERVERS ?? [],
        tabHosts: mcpTabHosts,
        // Only without auth: under API_KEYS a secret without a tenant list is for no tenant,
        // even one named local.
        unlistedSecretsTenant: authOff ? LOCAL_TENANT_NAME : null,
      },
      logger: logger.child({ service: 'agent-worker' }),
      metrics,
      webhooks: webhookDispatchOptions(config),
    });

    const gateway = await createGateway({
      store,
      bus,
      logger: logger.child({ service: 'gateway' }),
      storeReady: database,
      auth: { mode: authOff ? 'off' : 'keys' },
      ticketSecret: randomBytes(32).toString('hex'),
      metricsRegistry: metrics.registry,
      limits: gatewayLimitsOf(config),
      webhookAllowedHosts: config.WEBHOOK_ALLOWED_HOSTS,
      mcpTabHosts,
      ...(config.CORS_ORIGINS ? { cors: { origins: config.CORS_ORIGINS } } : {}),
      // The worker is right here: /context shows the exact request, its model and tools included.
      contextBuilder: async ({ tab, chunks }) => ({
        request: worker.nextRequest({
          config: tab.config,
          log: chunks,
          tenant: tab.config.mcpServers?.length ? await store.tabTenantName(tab.id) : null,
        }),
        source: 'worker',
      }),
    });
    closers.push(() => gateway.close());
    timeline?.mark('services built');
    // The gateway boots (its plugins, routes and hooks) while the database opens; it asks the
    // store only once the database is ready.
    const gatewayReady = Promise.resolve(gateway.ready());
    gatewayReady.catch(() => {});

    await database;
    await worker.start();
    closers.push(() => worker.stop());
    timeline?.mark('worker started');
    await gatewayReady;
    timeline?.mark('gateway ready');
    const address = await gateway.listen({ port: config.PORT, host: config.HOST });
    timeline?.mark('listening');
    return { url: address, authOff, simulatorUrl: simulator?.url ?? null, close };
  } catch (error) {
    // The database steps finish before the store closes under them.
    await database.catch(() => {});
    await close();
    throw error;
  }
}
