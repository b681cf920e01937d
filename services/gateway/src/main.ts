/**
 * `npm run start:gateway`: the gateway in services mode, on Postgres (DATABASE_URL) and NATS
 * (NATS_URL). Any number of these can run behind a load balancer with one STREAM_TICKET_SECRET.
 */
import { randomBytes } from 'node:crypto';
import { createNatsBus } from '@chunklog/bus';
import {
  chunklogVersion,
  createLogger,
  registerProcessMetrics,
  runUntilSignal,
  startStep,
  startTracing,
} from '@chunklog/runtime';
import { createPostgresStore } from '@chunklog/store';
import pg from 'pg';
import { Registry } from 'prom-client';
import { bootstrapApiKeys } from './auth/bootstrap-api-keys';
import { gatewayLimitsOf, parseGatewayConfig } from './config/gateway-config';
import { createWorkerContextBuilder } from './context/worker-context-builder';
import { createGateway } from './create-gateway';

const config = await startStep('gateway', 'environment', () => parseGatewayConfig(process.env));
const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
// First: everything built after this traces into it (docs/architecture.md, "Tracing").
const tracing = await startTracing({ serviceName: 'chunklog-gateway' });
const metricsRegistry = new Registry();
registerProcessMetrics(metricsRegistry, { version: chunklogVersion() });

/** How long a request waits for a database connection before it is answered 503. */
const CONNECT_TIMEOUT_MS = 5_000;

// The gateway's own pool, for the connect timeout: a database that does not answer (a dropped
// network, a host that is gone) costs a request seconds, not the kernel's minutes-long connect.
const pool = new pg.Pool({
  connectionString: config.DATABASE_URL,
  max: 10,
  connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
});
// An idle connection that dies (a database restart) must not end the process: the next query
// opens a new one, or gets an error its request answers with 503.
pool.on('error', (error) => logger.warn({ err: error }, 'idle database connection lost'));
const store = createPostgresStore({ pool, searchConfig: config.SEARCH_TEXT_CONFIG });
await startStep('gateway', 'Postgres (DATABASE_URL)', async () => {
  await store.migrate();
  await bootstrapApiKeys(store, config.API_KEYS);
});
const bus = await startStep('gateway', 'NATS (NATS_URL)', () =>
  createNatsBus({
    servers: config.NATS_URL,
    streamReplicas: config.NATS_STREAM_REPLICAS,
    name: 'chunklog-gateway',
    logger: logger.child({ component: 'bus' }),
    ...(config.NATS_SUBJECT_PREFIX ? { subjectPrefix: config.NATS_SUBJECT_PREFIX } : {}),
  }),
);

const app = await createGateway({
  store,
  bus,
  // Services mode always checks keys: auth may be off only in the all-in-one mode on loopback.
  auth: { mode: 'keys' },
  logger,
  metricsRegistry,
  limits: gatewayLimitsOf(config),
  webhookAllowedHosts: config.WEBHOOK_ALLOWED_HOSTS,
  mcpTabHosts: config.MCP_TAB_HOSTS,
  ...(config.CORS_ORIGINS ? { cors: { origins: config.CORS_ORIGINS } } : {}),
  ticketSecret: config.STREAM_TICKET_SECRET ?? randomBytes(32).toString('hex'),
  // The workers hold the tools and their own MODEL/MAX_TOKENS; these are only the fallback.
  contextBuilder: createWorkerContextBuilder({
    bus,
    defaults: { model: config.MODEL, maxTokens: config.MAX_TOKENS },
  }),
});
app.addHook('onClose', async () => {
  await bus.close();
  await store.close();
  await pool.end();
});
if (!config.STREAM_TICKET_SECRET) {
  logger.warn('STREAM_TICKET_SECRET is not set: stream tickets work on this gateway only');
}
if (!config.API_KEYS) {
  logger.info('API_KEYS is not set: only keys already in the database are accepted');
}

const address = await app.listen({ host: config.HOST, port: config.PORT });
logger.info(`chunklog gateway listening on ${address} (API keys required)`);
logger.info(
  tracing.enabled ? { tracing: 'on' } : { tracing: 'off', reason: tracing.offReason },
  'tracing',
);

// In-flight requests finish and streams get their final event; a stuck client cannot hold the
// process past the timeout.
await runUntilSignal({
  logger,
  async stop() {
    await app.close();
    // Last: the spans of the requests that just finished go out before the process ends.
    await tracing.shutdown();
  },
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
});
