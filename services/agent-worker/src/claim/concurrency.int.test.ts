import { randomUUID } from 'node:crypto';
import { createNatsBus } from '@chunklog/bus';
import { INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { assertGapFree, useHarness } from '../testing/harness';

const getHarness = useHarness();

describe('two workers, many tabs, many messages', () => {
  it('never runs two turns at once on a tab and processes every message exactly once', async (context) => {
    const harness = getHarness(context);
    // Each worker on its own NATS connection, as two processes would be.
    const secondBus = await createNatsBus({
      servers: harness.natsUrl!,
      subjectPrefix: harness.subjectPrefix!,
    });
    const first = await harness.startWorker({ workerId: 'worker-one' });
    const second = await harness.startWorker({ workerId: 'worker-two', bus: secondBus });
    try {
      const tabs = await Promise.all(Array.from({ length: 5 }, () => harness.newTab()));
      const sent = new Map<string, string[]>();
      const sends: Promise<void>[] = [];
      for (let round = 0; round < 5; round++) {
        for (const tab of tabs) {
          const chunkId = randomUUID();
          sent.set(tab.id, [...(sent.get(tab.id) ?? []), chunkId]);
          const command: MessageCommand = {
            tabId: tab.id,
            chunkId,
            text: `message ${round} [[sim: tool sleep {"milliseconds":20}]]`,
            mode: 'enqueue',
            acceptedAt: Date.now(),
          };
          // Every message is enqueued twice, from both connections: JetStream's dedupe and the
          // inbox's idempotency must make that one message.
          sends.push(harness.bus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId }));
          sends.push(secondBus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId }));
        }
      }
      await Promise.all(sends);
      await Promise.all(tabs.map((tab) => harness.turnsDone(tab.id, 5, 40_000)));
      await new Promise((resolve) => setTimeout(resolve, 500));

      const served = new Set<string>();
      for (const tab of tabs) {
        const log = await harness.store.readAll(tab.id);
        assertGapFree(log);
        // Exactly once: each message is one user chunk, and nothing else became one.
        const userChunks = log.filter((chunk) => chunk.role === 'user').map((chunk) => chunk.id);
        expect(userChunks.sort()).toEqual([...sent.get(tab.id)!].sort());
        // One turn at a time: a turn's chunks are contiguous in seq, never interleaved.
        const turnOrder = log
          .map((chunk) => chunk.turnId)
          .filter((turnId, index, all) => all[index - 1] !== turnId);
        expect(turnOrder).toHaveLength(5);
        expect(new Set(turnOrder).size).toBe(5);
        for (const turnId of turnOrder) {
          const turn = log.filter((chunk) => chunk.turnId === turnId);
          expect(turn.map((chunk) => chunk.type)).toEqual([
            'text',
            'tool_call',
            'tool_result',
            'text',
          ]);
        }
        expect(await harness.store.inboxList(tab.id)).toEqual([]);
        expect((await harness.store.getTab(tab.id)).status).toBe('idle');
        const done = harness.events.get(tab.id)!.filter((event) => event.event === 'turn-done');
        expect(done).toHaveLength(5);
        for (const event of done) served.add(event.event === 'turn-done' ? event.data.turnId : '');
      }
      expect(served.size).toBe(25);
    } finally {
      await first.stop();
      await second.stop();
      await secondBus.close();
    }
  });
});
