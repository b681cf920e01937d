/**
 * The store/bus pairs gateway suites run on: the embedded ones always, the real Postgres +
 * NATS when reachable and their adapters exist.
 */

import type { Bus, BusLogger } from '@chunklog/bus';
import { createMemoryBus, createNatsBus } from '@chunklog/bus';
import type { ChunkStore } from '@chunklog/store';
import { createPgliteStore, createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';

export interface Backend {
  store: ChunkStore;
  bus: Bus;
  cleanup(): Promise<void>;
}

export interface BackendFactory {
  name: string;
  create(): Promise<Backend>;
}

const quiet: BusLogger = { info() {}, warn() {}, error() {} };

function backend(store: ChunkStore, bus: Bus, afterClose?: () => Promise<void>): Backend {
  return {
    store,
    bus,
    async cleanup() {
      await bus.close();
      await store.close();
      await afterClose?.();
    },
  };
}

/** Embedded: PGlite (in memory) and the in-process bus. */
export const embeddedBackend: BackendFactory = {
  name: 'embedded',
  async create() {
    const store = createPgliteStore();
    await store.migrate();
    return backend(store, createMemoryBus({ logger: quiet }));
  },
};

/** The Postgres at `url` (a private cluster a suite stops and starts) and the in-process bus. */
export function postgresBackend(name: string, url: string): BackendFactory {
  return {
    name,
    async create() {
      const store = createPostgresStore({ url });
      await store.migrate();
      return backend(store, createMemoryBus({ logger: quiet }));
    },
  };
}

/** Real Postgres (own database) and NATS (own subject prefix), or null when unavailable. */
export async function realBackend(): Promise<BackendFactory | null> {
  const [postgresUrl, natsUrl] = await Promise.all([testPostgresUrl(), testNatsUrl()]);
  if (!postgresUrl || !natsUrl) return null;
  return {
    name: 'postgres+nats',
    async create() {
      const database = await createTestDatabase(postgresUrl);
      const store = createPostgresStore({ url: database.url });
      await store.migrate();
      const bus = await createNatsBus({
        servers: natsUrl,
        subjectPrefix: testSubjectPrefix(),
        logger: quiet,
      });
      return backend(store, bus, () => database.drop());
    },
  };
}

/** What suites run on: the embedded backend, and the real one when its servers are reachable. */
export async function everyBackend(): Promise<BackendFactory[]> {
  const real = await realBackend();
  return real ? [embeddedBackend, real] : [embeddedBackend];
}
