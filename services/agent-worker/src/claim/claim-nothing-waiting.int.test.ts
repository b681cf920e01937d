import { INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import { describe, expect, it } from 'vitest';
import { useHarness } from '../testing/harness';

/**
 * A message delivered again once its turn has taken it (a queue redelivery, a client's retry
 * under another message id) is stored as nothing new, and the claim that follows finds the tab
 * idle with nothing waiting: it must not lease the tab, which would show it running, with no
 * turn, to every reader in between.
 */
describe('claiming an idle tab with nothing waiting', () => {
  const leases = new Map<string, number>();
  /** inboxPut calls that have returned, by chunk id. */
  const stored = new Map<string, number>();

  const getHarness = useHarness('nats', async (harness) => {
    const countingStore = new Proxy(harness.store, {
      get(target, property, receiver) {
        if (property === 'inboxPut') {
          return async (...args: Parameters<ChunkStore['inboxPut']>) => {
            const result = await target.inboxPut(...args);
            stored.set(args[0].chunkId, (stored.get(args[0].chunkId) ?? 0) + 1);
            return result;
          };
        }
        if (property === 'acquireLease') {
          return (...args: Parameters<ChunkStore['acquireLease']>) => {
            leases.set(args[0], (leases.get(args[0]) ?? 0) + 1);
            return target.acquireLease(...args);
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    await harness.startWorker({ store: countingStore });
  });

  it('leaves the tab idle, unleased, when a delivered message is already in the log', async (context) => {
    const h = getHarness(context);
    const tab = await h.newTab();
    const chunkId = await h.send(tab.id, 'once [[sim: words 3]]');
    await h.turnsDone(tab.id, 1);
    expect(leases.get(tab.id)).toBe(1);

    // The same message again, under another queue message id so the queue does not drop it.
    const again: MessageCommand = {
      tabId: tab.id,
      chunkId,
      text: 'once [[sim: words 3]]',
      mode: 'interrupt',
      acceptedAt: Date.now(),
      cancelGeneration: await h.store.cancelGeneration(tab.id),
    };
    await h.bus.enqueue(INTAKE_QUEUE, again, { msgId: crypto.randomUUID() });
    await expect.poll(() => stored.get(chunkId), { timeout: 10_000, interval: 10 }).toBe(2);
    // The claim that follows the store runs next: give it time to lease, if it would.
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(leases.get(tab.id), 'no lease for the redelivery').toBe(1);
    const log = await h.store.readAll(tab.id);
    expect(log.filter((chunk) => chunk.id === chunkId)).toHaveLength(1);
    expect((await h.store.getTab(tab.id)).status).toBe('idle');
  });
});
