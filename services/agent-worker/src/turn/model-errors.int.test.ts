import { randomUUID } from 'node:crypto';
import { validateRequest } from '@chunklog/anthropic-sim';
import { LEFT_OUT_MESSAGE_TEXT } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { buildStepRequest } from '../request/step-request';
import { assertGapFree, useHarnessWithWorker } from '../testing/harness';

const getHarness = useHarnessWithWorker();

describe('model errors', () => {
  it('retries a 529 and completes the turn', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(
      tab.id,
      'overloaded-once [[sim: error 529 times=1]] [[sim: text "made it"]]',
    );
    await harness.awaitTurnEnd(tab.id, 'completed');
    expect(harness.requestsMentioning('overloaded-once').map((request) => request.status)).toEqual([
      529, 200,
    ]);
    const log = await harness.store.readAll(tab.id);
    expect(log.map((chunk) => chunk.type)).toEqual(['text', 'text']);
    expect(log[1]!.type === 'text' && log[1]!.data.text).toBe('made it');
  });

  it('waits at least retry-after before retrying a 429', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'rate-limited [[sim: error 429 retry-after=1 times=1]]');
    await harness.turnsDone(tab.id, 1);
    const [first, second] = harness.requestsMentioning('rate-limited');
    expect([first?.status, second?.status]).toEqual([429, 200]);
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(1000);
  });

  it('turns a persistent 500 into an error chunk and turn-done error, leaving a usable log', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'always-failing [[sim: error 500]]');
    await harness.awaitTurnEnd(tab.id, 'error');
    // fastRetry allows four attempts in all.
    expect(harness.requestsMentioning('always-failing').map((request) => request.status)).toEqual([
      500, 500, 500, 500,
    ]);
    const log = await harness.store.readAll(tab.id);
    expect(log.at(-1)).toMatchObject({
      role: 'assistant',
      type: 'error',
      data: { statusCode: 500 },
    });

    // The next request passes the API's rules (the failed text is left out of it, a note in
    // its place; here the next message repeats it).
    const next = buildStepRequest({
      log: [...log, { ...log[0]!, id: randomUUID(), seq: log.length + 1, turnId: randomUUID() }],
      config: {},
      defaults: { model: 'claude-sonnet-4-6', maxTokens: 1024 },
      tools: [],
    });
    expect(validateRequest(next)).toEqual([]);
    expect(next.messages.map((message) => message.role)).toEqual(['user']);
  });

  it('leaves a message the model failed on out of later requests, so the next message is answered', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'poisoned [[sim: error 400]]');
    await harness.awaitTurnEnd(tab.id, 'error');
    await harness.send(tab.id, 'recovered [[sim: text "back on track"]]');
    const [, second] = await harness.turnsDone(tab.id, 2);
    expect(second?.event === 'turn-done' && second.data.reason).toBe('completed');
    const log = await harness.store.readAll(tab.id);
    expect(log.at(-1)).toMatchObject({ type: 'text', data: { text: 'back on track' } });
    // The failed message stays in the log, and a note stands in its place on the wire.
    expect(
      log.some((chunk) => chunk.type === 'text' && chunk.data.text.startsWith('poisoned')),
    ).toBe(true);
    const [answered] = harness.requestsMentioning('recovered');
    expect(answered?.status).toBe(200);
    expect(JSON.stringify(answered?.body)).not.toContain('poisoned');
    expect(JSON.stringify(answered?.body)).toContain(LEFT_OUT_MESSAGE_TEXT);
  });

  it('handles an error event mid-stream: keeps the partial text, retries, and the log still builds a valid request', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(
      tab.id,
      'cut-stream [[sim: stream-error overloaded_error after=3 times=1]] [[sim: words 40]]',
    );
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    assertGapFree(log);
    const interrupted = log.find(
      (chunk) => chunk.type === 'text' && chunk.data.interrupted === true,
    );
    expect(interrupted).toBeDefined();
    expect(log.at(-1)).toMatchObject({ role: 'assistant', type: 'text' });
    expect(log.at(-1)!.id).not.toBe(interrupted!.id);
    const attempts = harness.requestsMentioning('cut-stream');
    expect(attempts.length).toBe(2);
    expect(attempts.every((request) => request.status === 200)).toBe(true);

    await harness.send(tab.id, 'after-cut [[sim: text "still fine"]]');
    await harness.turnsDone(tab.id, 2);
    expect(harness.requestsMentioning('after-cut').map((request) => request.status)).toEqual([200]);
  });
});
