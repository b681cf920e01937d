import { randomUUID } from 'node:crypto';
import type { Chunk, Tab } from '@chunklog/chunk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertGapFree, createHarness, type Harness, openingChunk } from '../testing/harness';
import { holdTool } from '../testing/hold-tool';
import { builtinTools } from '../tools/builtin-tools';
import type { Worker } from '../worker';

let harness: Harness | null;
let worker: Worker | null = null;

/** Tools that run until the test lets them go: a turn held between two steps on demand. */
const hold = holdTool('hold');
/** A second one, for a turn stopped with no later message to carry the cancel. */
const holdAgain = holdTool('hold_again');

beforeAll(async () => {
  // No worker yet: the first test needs a message to wait with nobody to take it.
  harness = await createHarness('nats');
});
afterAll(async () => {
  hold.release();
  holdAgain.release();
  await harness?.close();
});

async function startWorker(h: Harness): Promise<Worker> {
  worker ??= await h.startWorker({
    tools: [...builtinTools(), hold.tool, holdAgain.tool],
  });
  return worker;
}

/** A new tab whose turn, on the suite's worker, is held in `tool` (which `text` calls). */
async function turnHeldIn(tool: typeof hold, h: Harness, text: string): Promise<Tab> {
  await startWorker(h);
  const tab = await h.newTab();
  await h.send(tab.id, text);
  await tool.running;
  return tab;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function userTexts(log: readonly Chunk[]): string[] {
  return log.flatMap((chunk) =>
    chunk.role === 'user' && chunk.type === 'text' ? [chunk.data.text] : [],
  );
}

describe('durable cancel', () => {
  it('stops the turn of a message cancelled while it waited for a worker, before any model call', async (context) => {
    if (!harness) return context.skip();
    const tab = await harness.newTab();
    const chunkId = await harness.send(tab.id, 'waiting-for-a-worker [[sim: words 50]]');
    // Nobody holds the tab: only the record in Postgres can carry this cancel.
    expect(await harness.cancel(tab.id)).toBe(1);
    await startWorker(harness);

    const log = await harness.awaitTurnEnd(tab.id, 'cancelled');
    // The accepted message is kept, unanswered, and the model was never called for it.
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ id: chunkId, role: 'user', type: 'text' });
    expect(harness.requestsMentioning('waiting-for-a-worker')).toEqual([]);
    expect((await harness.store.getTab(tab.id)).status).toBe('idle');
    expect(await harness.store.inboxList(tab.id)).toEqual([]);

    // A message accepted after the cancel runs, on top of a log that still builds a valid request.
    await harness.send(tab.id, 'after-the-cancel [[sim: text "answered"]]');
    const turns = await harness.turnsDone(tab.id, 2);
    expect(turns.map((event) => event.event === 'turn-done' && event.data.reason)).toEqual([
      'cancelled',
      'completed',
    ]);
    const requests = harness.requestsMentioning('after-the-cancel');
    expect(requests).toHaveLength(1);
    expect(JSON.stringify(requests[0]!.body)).toContain('waiting-for-a-worker');
    const after = await harness.store.readAll(tab.id);
    assertGapFree(after);
    expect(after.at(-1)).toMatchObject({
      role: 'assistant',
      type: 'text',
      data: { text: 'answered' },
    });
  });

  it('leaves the next message alone after a cancel of an idle tab', async (context) => {
    if (!harness) return context.skip();
    await startWorker(harness);
    const tab = await harness.newTab();
    await harness.cancel(tab.id);
    await harness.send(tab.id, 'idle-cancel-then-this [[sim: text "fine"]]');
    await harness.awaitTurnEnd(tab.id, 'completed');
    expect(harness.requestsMentioning('idle-cancel-then-this')).toHaveLength(1);
    const log = await harness.store.readAll(tab.id);
    expect(log.map((chunk) => `${chunk.role}:${chunk.type}`)).toEqual([
      'user:text',
      'assistant:text',
    ]);
  });

  it('stops a turn between steps on a cancel nobody published, and runs a message sent after it as its own turn', async (context) => {
    if (!harness) return context.skip();
    const tab = await turnHeldIn(hold, harness, 'held-between-steps [[sim: tool hold {}]]');
    // Recorded only (the NATS publish lost): the worker finds it before its next model call.
    await harness.store.requestCancel(tab.id);
    const laterId = await harness.send(tab.id, 'sent-after-the-stop [[sim: text "second"]]');
    await until(
      async () =>
        (await harness!.store.inboxList(tab.id)).some((message) => message.chunkId === laterId),
      'the later message to wait in the inbox',
    );
    hold.release();

    const turns = await harness.turnsDone(tab.id, 2);
    expect(turns.map((event) => event.event === 'turn-done' && event.data.reason)).toEqual([
      'cancelled',
      'completed',
    ]);
    // Step 0 only: no model call after the tool result.
    const firstTurnRequests = harness
      .requestsMentioning('held-between-steps')
      .filter((request) => !JSON.stringify(request.body).includes('sent-after-the-stop'));
    expect(firstTurnRequests).toHaveLength(1);
    expect(harness.requestsMentioning('sent-after-the-stop')).toHaveLength(1);

    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(userTexts(log)).toEqual([
      'held-between-steps [[sim: tool hold {}]]',
      'sent-after-the-stop [[sim: text "second"]]',
    ]);
    const first = log[0]!;
    const later = log.find((chunk) => chunk.id === laterId)!;
    // The later message was not folded into the cancelled turn as an interrupt.
    expect(later.turnId).not.toBe(first.turnId);
    expect(log.find((chunk) => chunk.type === 'tool_result')).toMatchObject({
      turnId: first.turnId,
      data: { result: 'released', isError: false },
    });
    expect(log.at(-1)).toMatchObject({ turnId: later.turnId, data: { text: 'second' } });
  });

  it('stops a turn between steps on a cancel only recorded in Postgres, with no message to carry it', async (context) => {
    if (!harness) return context.skip();
    const tab = await turnHeldIn(
      holdAgain,
      harness,
      'recorded-between-steps [[sim: tool hold_again {}]]',
    );
    // Nothing else tells the worker: no NATS publish, no later message stamped after it.
    await harness.store.requestCancel(tab.id);
    holdAgain.release();

    await harness.awaitTurnEnd(tab.id, 'cancelled');
    // Step 0 only: the store was read before the step-1 call.
    expect(harness.requestsMentioning('recorded-between-steps')).toHaveLength(1);
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(log.map((chunk) => `${chunk.role}:${chunk.type}`)).toEqual([
      'user:text',
      'assistant:tool_call',
      'tool:tool_result',
    ]);
    expect(log.at(-1)).toMatchObject({ data: { result: 'released', isError: false } });
  });

  it('stops a turn waiting to retry a failed model call on a cancel nobody published', async (context) => {
    if (!harness) return context.skip();
    await startWorker(harness);
    const tab = await harness.newTab();
    // The first attempt fails with a 4 s retry-after: the cancel is recorded during that wait.
    await harness.send(
      tab.id,
      'retry-after-a-cancel [[sim: error 529 retry-after=4 times=1]] [[sim: text "too late"]]',
    );
    await until(
      async () => harness!.requestsMentioning('retry-after-a-cancel').length > 0,
      'the first model call',
    );
    // Recorded only (the NATS publish lost): the retry is a model call, checked like any other.
    await harness.store.requestCancel(tab.id);

    await harness.awaitTurnEnd(tab.id, 'cancelled');
    expect(harness.requestsMentioning('retry-after-a-cancel')).toHaveLength(1);
    const log = await harness.store.readAll(tab.id);
    expect(log.map((chunk) => `${chunk.role}:${chunk.type}`)).toEqual(['user:text']);
  });

  it('ends a turn taken over from a dead worker when a cancel was recorded after the turn began', async (context) => {
    if (!harness) return context.skip();
    await startWorker(harness);
    const tab = await harness.newTab();
    // A worker that began a turn, recorded its generation, wrote the user chunk and died.
    const turnId = randomUUID();
    const owner = 'a-worker-that-died';
    await harness.store.acquireLease(tab.id, { owner, turnId, leaseMs: 60_000 });
    await harness.store.setTurnCancelGeneration(tab.id, { owner, cancelGeneration: 0 });
    await harness.store.append(tab.id, [
      openingChunk(tab.id, turnId, 'orphaned-by-a-crash [[sim: words 30]]'),
    ]);
    // Nobody listens on NATS now; the taker finds the cancel in Postgres.
    await harness.cancel(tab.id);
    // Only now does the lease lapse (renewed for 1 ms), so the sweep cannot take it earlier.
    expect(await harness.store.renewLease(tab.id, { owner, leaseMs: 1 })).toBe(true);

    const [done] = await harness.turnsDone(tab.id, 1);
    expect(done).toMatchObject({ event: 'turn-done', data: { turnId, reason: 'cancelled' } });
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(log.map((chunk) => `${chunk.role}:${chunk.type}`)).toEqual([
      'user:text',
      'system:system',
    ]);
    expect(harness.requestsMentioning('orphaned-by-a-crash')).toEqual([]);
  });
});
