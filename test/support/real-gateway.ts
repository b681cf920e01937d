/**
 * The real product for client tests, in this process: the gateway over HTTP on a free port, one
 * worker running turns against the Anthropic simulator through the real SDK, on Postgres and
 * NATS (a database and a subject prefix of its own) when they are reachable, else on PGlite and
 * the in-process bus (the all-in-one run mode's parts), with the limits and clock a test needs.
 */
import { randomBytes } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { createWorker } from '@chunklog/agent-worker';
import { createSimulator } from '@chunklog/anthropic-sim';
import { type Bus, createMemoryBus, createNatsBus } from '@chunklog/bus';
import { bootstrapApiKeys, createGateway, type GatewayLimits } from '@chunklog/gateway';
import { type ChunkStore, createPgliteStore, createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import pino from 'pino';

export interface RealGatewayOptions {
  /** With a key the gateway runs with auth on (`Authorization` or a stream ticket). */
  apiKey?: string;
  limits?: Partial<GatewayLimits>;
  /** The gateway's clock (tickets are issued and checked on it). */
  clock?: () => number;
  /** How the worker retries failed model calls (default: the worker's own policy). */
  retry?: Parameters<typeof createWorker>[0]['retry'];
}

export interface GatewayProcess {
  url: string;
  /** Closes it as a shutdown does: its streams get `stream-end` with reason `shutdown`. */
  close(): Promise<void>;
}

export interface RealGateway extends GatewayProcess {
  apiKey: string | null;
  store: ChunkStore;
  bus: Bus;
  /** Another gateway on the same store and bus (what a load balancer would fail over to). */
  startGateway(): Promise<GatewayProcess>;
}

const quiet = pino({ level: 'silent' });

export async function startRealGateway(options: RealGatewayOptions = {}): Promise<RealGateway> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => {});
  };
  try {
    const [postgresUrl, natsUrl] = await Promise.all([testPostgresUrl(), testNatsUrl()]);
    let store: ChunkStore;
    let bus: Bus;
    if (postgresUrl && natsUrl) {
      const database = await createTestDatabase(postgresUrl);
      closers.push(() => database.drop());
      store = createPostgresStore({ url: database.url });
      closers.push(() => store.close());
      bus = await createNatsBus({
        servers: natsUrl,
        subjectPrefix: testSubjectPrefix(),
        logger: quiet,
      });
    } else {
      store = createPgliteStore();
      closers.push(() => store.close());
      bus = createMemoryBus({ logger: quiet });
    }
    closers.push(() => bus.close());
    await store.migrate();
    await bootstrapApiKeys(store, options.apiKey && `client-test:${options.apiKey}`);
    const simulator = await createSimulator({ logger: () => {} });
    closers.push(() => simulator.close());
    const worker = createWorker({
      store,
      bus,
      anthropic: new Anthropic({ apiKey: 'simulator', baseURL: simulator.url, maxRetries: 0 }),
      workerId: `client-test-${process.pid}`,
      leaseMs: 15_000,
      maxSteps: 25,
      model: 'claude-sonnet-4-6',
      logger: quiet,
      ...(options.retry ? { retry: options.retry } : {}),
    });
    await worker.start();
    closers.push(() => worker.stop());
    const ticketSecret = randomBytes(32).toString('hex');
    const startGateway = async (): Promise<GatewayProcess> => {
      const app = await createGateway({
        store,
        bus,
        auth: { mode: options.apiKey ? 'keys' : 'off' },
        ticketSecret,
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      let closed = false;
      const closeGateway = async () => {
        if (closed) return;
        closed = true;
        await app.close();
      };
      closers.push(closeGateway);
      return { url, close: closeGateway };
    };
    const first = await startGateway();
    return {
      url: first.url,
      apiKey: options.apiKey ?? null,
      store,
      bus,
      startGateway,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
