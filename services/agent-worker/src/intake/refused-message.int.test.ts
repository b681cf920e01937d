import { randomUUID } from 'node:crypto';
import { INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { assertGapFree, useHarnessWithWorker } from '../testing/harness';

const getHarness = useHarnessWithWorker();

describe('a message the store refuses', () => {
  it('ends as an error in its tab, under a turn of its own, and the tab goes on', async (context) => {
    const h = getHarness(context);
    const tab = await h.newTab();
    // The gateway never sends this (a NUL character), but a message the store refuses must not
    // vanish without a word in its tab.
    const chunkId = randomUUID();
    const command: MessageCommand = {
      tabId: tab.id,
      chunkId,
      text: 'bad \u0000 text',
      mode: 'interrupt',
      acceptedAt: Date.now(),
      cancelGeneration: 0,
    };
    await h.bus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId });
    const [refused] = await h.turnsDone(tab.id, 1);
    expect(refused).toMatchObject({ event: 'turn-done', data: { reason: 'error' } });
    const log = await h.store.readAll(tab.id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ id: chunkId, role: 'system', type: 'error' });
    expect(log[0]!.type === 'error' && log[0]!.data.message).toMatch(/NUL/);

    await h.send(tab.id, 'and now a good one');
    const done = await h.turnsDone(tab.id, 2);
    expect(done[1]).toMatchObject({ data: { reason: 'completed' } });
    const after = await h.store.readAll(tab.id);
    assertGapFree(after);
    expect(after.filter((chunk) => chunk.id === chunkId)).toHaveLength(1);
  });
});
