import type { ChunkStore } from '@chunklog/store';
import { describe, expect, it } from 'vitest';
import { useHarness } from '../testing/harness';

/**
 * A worker claiming a tab reads it first, and passes the running turn's id to the lease so a
 * takeover keeps it. The soak (test/e2e/soak.test.ts) found the race: the holder ends its turn
 * between that read and the acquire, the acquire then starts a fresh turn on the idle tab, and
 * that turn must not reuse the finished turn's id (clients saw one turn id start and finish
 * twice, and the two turns' chunks shared it). The store below releases the other holder's
 * lease right after the claim's read, every time.
 */
describe('claiming a tab whose turn ends during the claim', () => {
  const releaseAfterRead = new Map<string, { owner: string }>();

  const getHarness = useHarness('nats', async (harness) => {
    const racingStore = new Proxy(harness.store, {
      get(target, property, receiver) {
        if (property === 'getTab') {
          return async (...args: Parameters<ChunkStore['getTab']>) => {
            const tab = await target.getTab(...args);
            const holder = releaseAfterRead.get(args[0]);
            if (holder) {
              releaseAfterRead.delete(args[0]);
              await target.releaseLease(args[0], {
                owner: holder.owner,
                usage: {
                  inputTokens: 0,
                  outputTokens: 0,
                  cacheReadInputTokens: 0,
                  cacheCreationInputTokens: 0,
                },
              });
            }
            return tab;
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    await harness.startWorker({ store: racingStore });
  });

  it('runs the new message as a turn of its own id, not the finished turn’s', async (context) => {
    const h = getHarness(context);
    const tab = await h.newTab();
    const finishedTurnId = crypto.randomUUID();
    const lease = await h.store.acquireLease(tab.id, {
      owner: 'another-worker',
      turnId: finishedTurnId,
      leaseMs: 60_000,
    });
    expect(lease.acquired).toBe(true);
    releaseAfterRead.set(tab.id, { owner: 'another-worker' });

    const chunkId = await h.send(tab.id, 'hello [[sim: words 5]]', 'enqueue');
    const [done] = await h.turnsDone(tab.id, 1);
    expect(releaseAfterRead.has(tab.id), 'the claim read the tab').toBe(false);

    const log = await h.store.readAll(tab.id);
    expect(log[0]?.id).toBe(chunkId);
    const started = (h.events.get(tab.id) ?? []).flatMap((event) =>
      event.event === 'turn-start' ? [event.data.turnId] : [],
    );
    expect(started).toHaveLength(1);
    expect(started[0]).not.toBe(finishedTurnId);
    expect(done?.event === 'turn-done' && done.data.turnId).toBe(started[0]);
    expect(log.map((chunk) => chunk.turnId)).toEqual(log.map(() => started[0]));
    const after = await h.store.getTab(tab.id);
    expect(after.status).toBe('idle');
  });
});
