/**
 * Stand-in for `services/gateway/src/main.ts`, used by the end-to-end suites only while that
 * entry point does not exist: the same wiring a main does (config from the environment,
 * Postgres store, NATS bus, API keys bootstrapped, listen, graceful shutdown), around the
 * real `createGateway`.
 */
import { createNatsBus } from '@chunklog/bus';
import { createGateway } from '@chunklog/gateway';
import { createPostgresStore } from '@chunklog/store';
import { z } from 'zod';

const ConfigSchema = z.object({
  DATABASE_URL: z.url(),
  NATS_URL: z.string().min(1),
  NATS_SUBJECT_PREFIX: z.string().optional(),
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  API_KEYS: z.string().min(1),
  STREAM_TICKET_SECRET: z.string().min(16),
});
const config = ConfigSchema.parse(process.env);

const store = createPostgresStore({ url: config.DATABASE_URL });
const bus = await createNatsBus({
  servers: config.NATS_URL,
  name: 'chunklog-gateway-e2e',
  ...(config.NATS_SUBJECT_PREFIX ? { subjectPrefix: config.NATS_SUBJECT_PREFIX } : {}),
});
for (const pair of config.API_KEYS.split(',')) {
  const [tenantName, key] = pair.split(':');
  if (!tenantName || !key) throw new Error(`API_KEYS entry "${pair}" is not tenant:key`);
  const tenant = await store.createTenant({ name: tenantName });
  await store.addApiKey(tenant.id, key);
}
const app = await createGateway({
  store,
  bus,
  auth: { mode: 'keys' },
  logger: { level: process.env.LOG_LEVEL ?? 'warn' },
  ticketSecret: config.STREAM_TICKET_SECRET,
});
app.addHook('onClose', async () => {
  await bus.close();
  await store.close();
});
await app.listen({ host: config.HOST, port: config.PORT });
console.error(`gateway listening on http://${config.HOST}:${config.PORT}`);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await app.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
