/**
 * Webhook figures, on the real Postgres (BENCH_DATABASE_URL, TEST_DATABASE_URL or the local
 * server) in a throwaway database. Short phases of each contender alternate over several
 * rounds, so outside load on a shared machine hits them alike; a ratio is the median over
 * rounds of that round's ratio.
 *
 * - webhooks.turn_end.cost_ratio.e3: a turn's lease cycle (acquireLease, then releaseLease
 *   with the ended turn) on a tab of a tenant with 3 endpoints subscribed to the event, whose
 *   release therefore writes 3 outbox rows in its statement, ÷ the same cycle for a tenant
 *   without endpoints. What the outbox adds to the end of a turn.
 * - webhooks.turn_end.cycles_per_second.e0: the cycle rate without endpoints (the baseline).
 */
import { randomUUID } from 'node:crypto';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import { textChunk } from '@chunklog/store/testing';
import { createTestDatabase } from '@chunklog/test-infra';
import { median } from './percentile';

const adminUrl =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

const phaseMs = 600;
const rounds = 7;
const tabsPerTenant = 8;
const usage = {
  inputTokens: 10,
  outputTokens: 20,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};
const secret = `whsec_${Buffer.from('bench secret, thirty-two bytes!!').toString('base64')}`;

/** Lease cycles per second over the tenant's tabs, one loop per tab, for one phase. */
async function cycleRate(store: ChunkStore, tabs: string[]): Promise<number> {
  let cycles = 0;
  const deadline = performance.now() + phaseMs;
  const started = performance.now();
  await Promise.all(
    tabs.map(async (tabId) => {
      while (performance.now() < deadline) {
        const turnId = randomUUID();
        await store.acquireLease(tabId, { owner: 'bench', turnId, leaseMs: 60_000 });
        await store.releaseLease(tabId, {
          owner: 'bench',
          usage,
          ended: { turnId, reason: 'completed' },
        });
        cycles += 1;
      }
    }),
  );
  return cycles / ((performance.now() - started) / 1000);
}

async function tenantTabs(store: ChunkStore, endpoints: number): Promise<string[]> {
  const tenant = await store.createTenant({ name: `bench-${randomUUID()}` });
  for (let index = 0; index < endpoints; index++) {
    await store.createWebhookEndpoint({
      tenantId: tenant.id,
      url: `http://127.0.0.1:9/${index}`,
      eventTypes: ['turn.completed'],
      secret,
    });
  }
  const tabs: string[] = [];
  for (let index = 0; index < tabsPerTenant; index++) {
    const tab = await store.createTab({ tenantId: tenant.id });
    await store.append(tab.id, [textChunk(tab.id, 'a turn')]);
    tabs.push(tab.id);
  }
  return tabs;
}

export default async function webhooksBench(): Promise<Record<string, number>> {
  const database = await createTestDatabase(adminUrl);
  const store = createPostgresStore({ url: database.url, maxConnections: tabsPerTenant });
  try {
    await store.migrate();
    const plain = await tenantTabs(store, 0);
    const hooked = await tenantTabs(store, 3);
    await cycleRate(store, plain);
    await cycleRate(store, hooked);
    const ratios: number[] = [];
    const baselines: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const without = await cycleRate(store, plain);
      const withEndpoints = await cycleRate(store, hooked);
      ratios.push(without / withEndpoints);
      baselines.push(without);
    }
    return {
      'webhooks.turn_end.cost_ratio.e3': median(ratios),
      'webhooks.turn_end.cycles_per_second.e0': median(baselines),
    };
  } finally {
    await store.close();
    await database.drop();
  }
}
