/**
 * Several gateways started at once with the same API_KEYS (a rollout, `docker compose up` with
 * replicas) each bootstrap the same tenants and keys. Two starts of the real gateway main at
 * the same moment once failed 1 time in 8 ("this api key already belongs to another tenant"),
 * so this suite reproduces the race deterministically: the bootstrap steps main.ts runs
 * (createTenant, then addApiKey), from two store instances (two pools, as two processes), on
 * one fresh database.
 */
import { randomUUID } from 'node:crypto';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import { createTestDatabase, type TestDatabase, testPostgresUrl } from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const postgresUrl = await testPostgresUrl();
if (postgresUrl === null) console.warn('!!! SKIPPED: the API key bootstrap suite needs Postgres');

/** What services/gateway/src/main.ts does for each API_KEYS pair at start-up. */
async function bootstrap(store: ChunkStore, tenant: string, key: string): Promise<void> {
  const created = await store.createTenant({ name: tenant });
  await store.addApiKey(created.id, key);
}

describe.skipIf(postgresUrl === null)('API_KEYS bootstrapped by several gateways', () => {
  let database: TestDatabase;
  let first: ChunkStore;
  let second: ChunkStore;

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl!);
    first = createPostgresStore({ url: database.url });
    second = createPostgresStore({ url: database.url });
    await first.migrate();
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  it('is idempotent when the gateways start one after the other', async () => {
    const pairs = Array.from({ length: 10 }, (_, index) => ({
      tenant: `sequential-${index}-${randomUUID()}`,
      key: `ck_${randomUUID()}`,
    }));
    for (const { tenant, key } of pairs) await bootstrap(first, tenant, key);
    for (const { tenant, key } of pairs) await bootstrap(second, tenant, key);
    for (const { key } of pairs) expect(await first.authenticate(key)).not.toBeNull();
  });

  // Both statements are insert-or-select; under a concurrent insert of the same row the
  // select half reads a snapshot without it, so the store retries once with a new snapshot.
  it('succeeds on every gateway when they start at the same moment', async () => {
    const pairs = Array.from({ length: 30 }, (_, index) => ({
      tenant: `concurrent-${index}-${randomUUID()}`,
      key: `ck_${randomUUID()}`,
    }));
    const results = await Promise.allSettled(
      pairs.flatMap(({ tenant, key }) => [
        bootstrap(first, tenant, key),
        bootstrap(second, tenant, key),
      ]),
    );
    const failures = results.flatMap((result) =>
      result.status === 'rejected' ? [String(result.reason)] : [],
    );
    expect(failures).toEqual([]);
    for (const { key } of pairs) expect(await first.authenticate(key)).not.toBeNull();
  });
});
