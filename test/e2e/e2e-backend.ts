/**
 * What every end-to-end suite shares: a fresh Postgres database (migrated once, before any
 * service starts, so services never race on migrations), a unique NATS subject prefix, the
 * Anthropic simulator in the test process, and launchers for the real gateway and worker
 * entry points as child processes.
 */
import { randomUUID } from 'node:crypto';
import { createSimulator, type Simulator } from '@chunklog/anthropic-sim';
import type { ChunkStore } from '@chunklog/store';
import { createPostgresStore } from '@chunklog/store';
import { createTestDatabase, freePort, testSubjectPrefix } from '@chunklog/test-infra';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { type ServiceProcess, startServiceProcess, waitUntilReady } from './service-process';

const GATEWAY_MAIN = 'services/gateway/src/main.ts';
const WORKER_MAIN = 'services/agent-worker/src/main.ts';

/** Shared by every gateway of a suite, so a ticket issued by one is honoured by another. */
const TICKET_SECRET = `e2e-ticket-secret-${randomUUID()}`;

export interface E2eTenant {
  name: string;
  key: string;
}

export interface E2eGateway {
  process: ServiceProcess;
  baseUrl: string;
}

export interface E2eBackend {
  databaseUrl: string;
  natsUrl: string;
  subjectPrefix: string;
  simulator: Simulator;
  /** The test's own view of the database, for leases and raw reads. */
  store: ChunkStore;
  tenants: { alpha: E2eTenant; beta: E2eTenant };
  /** `environment` adds to (or overrides) the variables the suite gives every gateway. */
  startGateway(options?: {
    name?: string;
    natsUrl?: string;
    environment?: Record<string, string>;
  }): Promise<E2eGateway>;
  startWorker(options: {
    workerId: string;
    natsUrl?: string;
    environment?: Record<string, string>;
  }): Promise<ServiceProcess>;
  /** The recent output of every process started, for failure reports. */
  processOutputs(): string;
  /** Stops every process still running (SIGKILL after a short grace), then drops everything. */
  close(): Promise<void>;
}

export async function createE2eBackend(input: {
  postgresUrl: string;
  natsUrl: string;
  leaseMs: number;
}): Promise<E2eBackend> {
  const database = await createTestDatabase(input.postgresUrl);
  const store = createPostgresStore({ url: database.url });
  await store.migrate();
  const simulator = await createSimulator({ logger: () => {} });
  const subjectPrefix = testSubjectPrefix();
  const tenants = {
    alpha: { name: `alpha-${subjectPrefix}`, key: `ck_alpha_${randomUUID()}` },
    beta: { name: `beta-${subjectPrefix}`, key: `ck_beta_${randomUUID()}` },
  };
  const processes: ServiceProcess[] = [];
  const natsUrls = new Set([input.natsUrl]);

  const backend: E2eBackend = {
    databaseUrl: database.url,
    natsUrl: input.natsUrl,
    subjectPrefix,
    simulator,
    store,
    tenants,
    async startGateway(options = {}) {
      const natsUrl = options.natsUrl ?? input.natsUrl;
      natsUrls.add(natsUrl);
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        const gateway = startServiceProcess({
          name: options.name ?? 'gateway',
          entry: GATEWAY_MAIN,
          environment: {
            DATABASE_URL: database.url,
            NATS_URL: natsUrl,
            NATS_SUBJECT_PREFIX: subjectPrefix,
            PORT: String(port),
            HOST: '127.0.0.1',
            API_KEYS: `${tenants.alpha.name}:${tenants.alpha.key},${tenants.beta.name}:${tenants.beta.key}`,
            STREAM_TICKET_SECRET: TICKET_SECRET,
            LOG_LEVEL: 'warn',
            ...options.environment,
          },
        });
        processes.push(gateway);
        const baseUrl = `http://127.0.0.1:${port}`;
        try {
          await waitUntilReady(gateway, baseUrl);
          return { process: gateway, baseUrl };
        } catch (error) {
          // The port was free when picked; another process may have bound it since.
          const portTaken = !gateway.running() && gateway.output().includes('EADDRINUSE');
          if (!portTaken || attempt >= 3) throw error;
        }
      }
    },
    async startWorker(options) {
      const natsUrl = options.natsUrl ?? input.natsUrl;
      natsUrls.add(natsUrl);
      const worker = startServiceProcess({
        name: options.workerId,
        entry: WORKER_MAIN,
        environment: {
          DATABASE_URL: database.url,
          NATS_URL: natsUrl,
          NATS_SUBJECT_PREFIX: subjectPrefix,
          ANTHROPIC_API_KEY: 'e2e-test-key',
          ANTHROPIC_BASE_URL: simulator.url,
          MODEL: 'claude-sonnet-4-6',
          LEASE_MS: String(input.leaseMs),
          WORKER_ID: options.workerId,
          LOG_LEVEL: 'info',
          ...options.environment,
        },
      });
      processes.push(worker);
      await worker.waitForOutput('agent worker ready', 90_000);
      return worker;
    },
    processOutputs() {
      return processes
        .map((service) => `----- ${service.name} -----\n${service.output()}`)
        .join('\n');
    },
    async close() {
      await Promise.all(processes.map((service) => service.stop('SIGTERM', 3_000)));
      await simulator.close();
      await store.close();
      await database.drop();
      for (const url of natsUrls) await deleteStreams(url, subjectPrefix);
    },
  };
  return backend;
}

/** Deletes the JetStream streams (the intake queue) made under this suite's prefix. */
async function deleteStreams(natsUrl: string, subjectPrefix: string): Promise<void> {
  let connection: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    connection = await connect({ servers: natsUrl, timeout: 2_000 });
    const manager = await jetstreamManager(connection);
    for await (const name of manager.streams.names()) {
      if (name.startsWith(`${subjectPrefix}_`)) await manager.streams.delete(name);
    }
  } catch {
    // A private server already stopped takes its streams with it.
  } finally {
    await connection?.close();
  }
}
