import type { ChunkStore } from '@chunklog/store';
import { describe, expect, it } from 'vitest';
import { useHarness } from '../testing/harness';

/**
 * A cancel that lands after the model's whole answer has arrived, while the worker is still
 * storing its last block. The SDK's stream then yields the remaining events and never ends (nor
 * throws): found by the e2e soak (test/e2e/soak.test.ts), where such a turn kept its lease,
 * renewed, for as long as the worker ran, and every later message of the tab waited behind it.
 * The store below sends the cancel, and holds the answer's append a moment, once per tab.
 */
describe('a cancel arriving while the final answer is stored', () => {
  const getHarness = useHarness('nats', async (h) => {
    const cancelled = new Set<string>();
    const cancellingStore = new Proxy(h.store, {
      get(target, property, receiver) {
        if (property === 'append') {
          return async (...args: Parameters<ChunkStore['append']>) => {
            const [tabId, chunks] = args;
            const answer = chunks.some(
              (chunk) => chunk.type === 'text' && chunk.role === 'assistant',
            );
            if (answer && !cancelled.has(tabId)) {
              cancelled.add(tabId);
              await h.cancel(tabId);
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            return target.append(...args);
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    await h.startWorker({ store: cancellingStore, stopTimeoutMs: 500 });
  });

  it('ends the turn cancelled and releases the tab', async (context) => {
    const h = getHarness(context);
    const tab = await h.newTab();
    await h.send(tab.id, 'answer [[sim: words 30]] [[sim: rate 200]]', 'enqueue');
    const [done] = await h.turnsDone(tab.id, 1, 10_000);
    expect(done?.event === 'turn-done' && done.data.reason).toBe('cancelled');
    expect((await h.store.getTab(tab.id)).status).toBe('idle');
    const log = await h.store.readAll(tab.id);
    expect(log.map((chunk) => [chunk.role, chunk.type])).toEqual([
      ['user', 'text'],
      ['assistant', 'text'],
    ]);

    // The tab is free for the next message.
    await h.send(tab.id, 'again [[sim: tool get_time {}]] [[sim: steps 1]]', 'enqueue');
    await h.turnsDone(tab.id, 2, 10_000);
    expect((await h.store.getTab(tab.id)).status).toBe('idle');
  });
});
