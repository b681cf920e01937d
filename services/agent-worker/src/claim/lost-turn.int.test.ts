/**
 * A turn whose lease is this worker's although this worker does not hold the tab (its run ended
 * without releasing, say in a store outage, or it restarted under the same WORKER_ID) is a turn
 * it lost: its own sweep must take it up, not mistake the lease for a fresh one on an idle tab.
 */
import { randomUUID } from 'node:crypto';
import { sleep } from '@chunklog/test-infra';
import { describe, expect, it } from 'vitest';
import { assertGapFree, openingChunk, useHarness } from '../testing/harness';

const getHarness = useHarness();

describe('a turn this worker lost', () => {
  it('is continued from the log under its own turn id, with a notice, and ends with turn-done', async (context) => {
    const h = getHarness(context);
    const tab = await h.newTab();
    const workerId = `worker-${randomUUID().slice(0, 8)}`;
    const turnId = randomUUID();
    // What the worker left behind: its lease on a running turn whose opening message is stored.
    await h.store.acquireLease(tab.id, { owner: workerId, turnId, leaseMs: 200 });
    await h.store.append(tab.id, [openingChunk(tab.id, turnId, 'still there? [[sim: words 5]]')], {
      expectedSeq: 1,
    });
    await sleep(300);

    await h.startWorker({ workerId });
    const [done] = await h.turnsDone(tab.id, 1);
    expect(done).toMatchObject({ data: { turnId, reason: 'completed' } });
    const log = await h.store.readAll(tab.id);
    assertGapFree(log);
    expect(log.map((chunk) => [chunk.turnId, chunk.role, chunk.type])).toEqual([
      [turnId, 'user', 'text'],
      [turnId, 'system', 'system'],
      [turnId, 'assistant', 'text'],
    ]);
    expect(log[1]).toMatchObject({ data: { kind: 'takeover' } });
    expect((await h.store.getTab(tab.id)).status).toBe('idle');
  });
});
