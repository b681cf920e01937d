import { randomUUID } from 'node:crypto';
import { cancelSubject } from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferred } from '../testing/deferred';
import { assertGapFree, createHarness, type Harness } from '../testing/harness';

/** A tab whose log loads only when the test says so. */
interface LoadGate {
  reached: Promise<void>;
  release(): void;
}

let harness: Harness | null;
const gates = new Map<string, LoadGate & { arrive(): void; released: Promise<void> }>();
/** Every gate made, so that a failed test cannot leave a load hanging past the suite. */
const allGates: LoadGate[] = [];
const slowWorkerId = `slow-${randomUUID().slice(0, 8)}`;
const leaseMs = 2_000;

/** Makes the slow worker's next log load of `tabId` wait for `release()`. */
function gateLoad(tabId: string): LoadGate {
  const reached = deferred();
  const released = deferred();
  const gate = {
    reached: reached.promise,
    arrive: reached.resolve,
    released: released.promise,
    release: released.resolve,
  };
  gates.set(tabId, gate);
  allGates.push(gate);
  return gate;
}

beforeAll(async () => {
  harness = await createHarness('nats');
  if (!harness) return;
  // The first worker here loads a gated tab's log only when its test lets it go.
  const base = harness.store;
  const slowStore = new Proxy(base, {
    get(target, property, receiver) {
      if (property !== 'readFromLatestCompaction') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<ChunkStore['readFromLatestCompaction']>) => {
        const gate = gates.get(args[0]);
        if (gate) {
          gates.delete(args[0]);
          gate.arrive();
          await gate.released;
        }
        return target.readFromLatestCompaction(...args);
      };
    },
  });
  await harness.startWorker({ store: slowStore, workerId: slowWorkerId, leaseMs });
});
afterAll(async () => {
  for (const gate of allGates) gate.release();
  await harness?.close();
});

/** A new tab, a message to it, and the slow worker held in its load of the tab's log. */
async function turnHeldInLoad(h: Harness, text: string) {
  const tab = await h.newTab();
  const gate = gateLoad(tab.id);
  await h.send(tab.id, text);
  await gate.reached;
  return { tab, gate };
}

async function expectCancelledBeforeAnyModelCall(h: Harness, tabId: string, marker: string) {
  const log = await h.awaitTurnEnd(tabId, 'cancelled');
  assertGapFree(log);
  // The message is kept; the model was never asked to answer it.
  expect(log.map((chunk) => `${chunk.role}:${chunk.type}`)).toEqual(['user:text']);
  expect(h.requestsMentioning(marker)).toEqual([]);
}

describe('cancel while the log loads', () => {
  it('stops a turn cancelled on NATS while its worker is still loading the log', async (context) => {
    if (!harness) return context.skip();
    const { tab, gate } = await turnHeldInLoad(
      harness,
      'cancel-me-early [[sim: words 200]] [[sim: rate 50]]',
    );
    // The lease is taken (the tab shows as running) and the worker is reading the log.
    expect((await harness.store.getTab(tab.id)).status).toBe('running');
    await harness.bus.publish(cancelSubject(tab.id), { tabId: tab.id });
    gate.release();
    await expectCancelledBeforeAnyModelCall(harness, tab.id, 'cancel-me-early');
  });

  it('stops a turn whose cancel was recorded but never heard on NATS', async (context) => {
    if (!harness) return context.skip();
    const { tab, gate } = await turnHeldInLoad(harness, 'cancel-unheard [[sim: words 200]]');
    // As when the gateway's publish goes out in the instant before the holder subscribes.
    await harness.store.requestCancel(tab.id);
    gate.release();
    await expectCancelledBeforeAnyModelCall(harness, tab.id, 'cancel-unheard');
  });
});

describe('lease renewal', () => {
  it('keeps a tab whose log loads for longer than the lease from a second worker', async (context) => {
    if (!harness) return context.skip();
    const h = harness;
    const { tab, gate } = await turnHeldInLoad(h, 'slow-log-lease [[sim: text "kept"]]');
    const loadStartedAt = Date.now();
    expect((await h.store.getLease(tab.id))?.owner).toBe(slowWorkerId);

    // A second worker sweeping for expired leases, counting its sweeps and what it acquires.
    const sweepsStartedAt: number[] = [];
    const acquiredBySecond: string[] = [];
    const watchedStore = new Proxy(h.store, {
      get(target, property, receiver) {
        if (property === 'tabsNeedingWork') {
          return async (...args: Parameters<ChunkStore['tabsNeedingWork']>) => {
            const startedAt = Date.now();
            const tabs = await target.tabsNeedingWork(...args);
            sweepsStartedAt.push(startedAt);
            return tabs;
          };
        }
        if (property === 'acquireLease') {
          return async (...args: Parameters<ChunkStore['acquireLease']>) => {
            const result = await target.acquireLease(...args);
            if (result.acquired) acquiredBySecond.push(args[0]);
            return result;
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    await h.startWorker({ store: watchedStore, leaseMs, sweepMs: 100 });

    // Hold the load until a lease unrenewed since the acquire would have lapsed a whole lease
    // ago, and the second worker has swept three times since then.
    const lapsedBy = loadStartedAt + 2 * leaseMs;
    const deadline = Date.now() + 30_000;
    while (sweepsStartedAt.filter((startedAt) => startedAt > lapsedBy).length < 3) {
      if (Date.now() > deadline) throw new Error('the second worker did not sweep in time');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await h.store.getLease(tab.id))?.owner).toBe(slowWorkerId);
    gate.release();

    await h.awaitTurnEnd(tab.id, 'completed');
    expect(acquiredBySecond).not.toContain(tab.id);
    const log = await h.store.readAll(tab.id);
    assertGapFree(log);
    expect(log.map((chunk) => `${chunk.role}:${chunk.type}`)).toEqual([
      'user:text',
      'assistant:text',
    ]);
    expect(h.requestsMentioning('slow-log-lease')).toHaveLength(1);
  });
});
