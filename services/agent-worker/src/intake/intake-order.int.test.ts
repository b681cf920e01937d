import type { ChunkStore } from '@chunklog/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertGapFree, createHarness, type Harness } from '../testing/harness';

/**
 * The worker stores intake items concurrently, so a message sent second can reach the inbox
 * first. These tests force that: the store below holds the insert of a message marked FIRST
 * until the next message of its tab is stored, and then, for a tab in `reorders`, holds the
 * tab's inbox listings until FIRST is stored too (the moment a worker picks the turn's opener,
 * with both messages waiting); for a tab in `lateFirsts` it lets listings through and holds
 * FIRST until one has been made (or LATE_FIRST_MS passed), the race where the second message
 * alone is waiting when the opener is picked.
 */
const FIRST = 'order-first';
/** How long the FIRST message of a `lateFirsts` tab is held at most. */
const LATE_FIRST_MS = 1_000;

/** A gate that opens once. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

interface Reorder {
  /** Opens once a message of the tab not marked FIRST is stored. */
  secondStored: ReturnType<typeof gate>;
  /** Opens once the FIRST message is stored. */
  firstStored: ReturnType<typeof gate>;
  /** Opens once the tab's inbox was listed. */
  listed: ReturnType<typeof gate>;
  /** Texts in the order their inserts finished. */
  stored: string[];
  /** Whether listings wait for FIRST (`held`) or FIRST waits for a listing (`late`). */
  first: 'held' | 'late';
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const mode of ['nats', 'memory'] as const) {
  describe(`intake order (${mode} bus)`, () => {
    let harness: Harness | null;
    const reorders = new Map<string, Reorder>();

    beforeAll(async () => {
      harness = await createHarness(mode);
      if (!harness) return;
      const reorderingStore = new Proxy(harness.store, {
        get(target, property, receiver) {
          if (property === 'inboxPut') {
            return async (...args: Parameters<ChunkStore['inboxPut']>) => {
              const [message] = args;
              const reorder = reorders.get(message.tabId);
              if (!reorder) return target.inboxPut(...args);
              const isFirst = message.text.includes(FIRST);
              if (isFirst) await reorder.secondStored.opened;
              if (isFirst && reorder.first === 'late') {
                await Promise.race([reorder.listed.opened, delay(LATE_FIRST_MS)]);
              }
              const stored = await target.inboxPut(...args);
              reorder.stored.push(message.text);
              (isFirst ? reorder.firstStored : reorder.secondStored).open();
              return stored;
            };
          }
          if (property === 'inboxList') {
            return async (...args: Parameters<ChunkStore['inboxList']>) => {
              const reorder = reorders.get(args[0]);
              if (reorder?.first === 'held') await reorder.firstStored.opened;
              const waiting = await target.inboxList(...args);
              reorder?.listed.open();
              return waiting;
            };
          }
          return Reflect.get(target, property, receiver);
        },
      });
      await harness.startWorker({ store: reorderingStore });
    });
    afterAll(async () => {
      // A failed test must not leave a held insert or listing behind.
      for (const reorder of reorders.values()) {
        reorder.secondStored.open();
        reorder.firstStored.open();
        reorder.listed.open();
      }
      await harness?.close();
    });

    /** Sends FIRST (an interrupt) then an enqueue, and expects two turns in that order. */
    async function expectTwoTurnsInSendOrder(h: Harness, first: Reorder['first']) {
      const tab = await h.newTab();
      const reorder: Reorder = {
        secondStored: gate(),
        firstStored: gate(),
        listed: gate(),
        stored: [],
        first,
      };
      reorders.set(tab.id, reorder);

      // Each send resolves once the queue acknowledged the item, as the gateway's 202 does.
      const firstId = await h.send(tab.id, `${FIRST} [[sim: text "answer one"]]`, 'interrupt');
      const secondId = await h.send(tab.id, 'order-second [[sim: text "answer two"]]', 'enqueue');

      const done = await h.turnsDone(tab.id, 2, 30_000);
      // The defect's precondition happened: the message sent second was stored first.
      expect(reorder.stored).toEqual([
        'order-second [[sim: text "answer two"]]',
        `${FIRST} [[sim: text "answer one"]]`,
      ]);
      expect(done.map((event) => event.event === 'turn-done' && event.data.reason)).toEqual([
        'completed',
        'completed',
      ]);
      const log = await h.store.readAll(tab.id);
      assertGapFree(log);
      expect(
        log.map((chunk) => [
          chunk.role,
          chunk.type === 'text' ? chunk.data.text.split(' [[')[0] : chunk.type,
        ]),
      ).toEqual([
        ['user', FIRST],
        ['assistant', 'answer one'],
        ['user', 'order-second'],
        ['assistant', 'answer two'],
      ]);
      expect(log[0]!.id).toBe(firstId);
      expect(log[2]!.id).toBe(secondId);
      // Two turns: the first message's, then the second's.
      expect(log[0]!.turnId).toBe(log[1]!.turnId);
      expect(log[2]!.turnId).toBe(log[3]!.turnId);
      expect(log[2]!.turnId).not.toBe(log[0]!.turnId);
      expect(done.map((event) => event.event === 'turn-done' && event.data.turnId)).toEqual([
        log[0]!.turnId,
        log[2]!.turnId,
      ]);
    }

    it('runs an interrupt and an enqueue sent right after it as two turns, in send order, though the second was stored first', async (context) => {
      if (!harness) return context.skip();
      await expectTwoTurnsInSendOrder(harness, 'held');
    });

    it('runs them in send order when the second is stored alone and the tab claimed before the first is stored', async (context) => {
      if (!harness) return context.skip();
      await expectTwoTurnsInSendOrder(harness, 'late');
    });
  });
}
