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

  it('publishes turn-retry before each retry: which retry, of how many, the wait and the reason', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(
      tab.id,
      'retried-twice [[sim: error 529 times=2]] [[sim: text "second wind"]]',
    );
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    const answerStep = log.at(-1)!.step;
    const events = harness.events.get(tab.id) ?? [];
    const retries = events.flatMap((event) => (event.event === 'turn-retry' ? [event.data] : []));
    const turnId = events.find((event) => event.event === 'turn-start')?.data.turnId;
    // fastRetry allows four attempts in all: three retries.
    expect(
      retries.map(({ retry, maxRetries, step, reason }) => ({ retry, maxRetries, step, reason })),
    ).toEqual([
      { retry: 1, maxRetries: 3, step: answerStep, reason: '529 overloaded_error' },
      { retry: 2, maxRetries: 3, step: answerStep, reason: '529 overloaded_error' },
    ]);
    expect(retries.every((retry) => retry.turnId === turnId && retry.tabId === tab.id)).toBe(true);
    // The wait is fastRetry's backoff with jitter: half to all of 20 ms, then of 40 ms.
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(10);
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(20);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(20);
    expect(retries[1]!.delayMs).toBeLessThanOrEqual(40);
    // Each retry is announced after the failure and before the answer that follows it.
    const kinds = events.map((event) => event.event);
    expect(kinds.lastIndexOf('turn-retry')).toBeLessThan(kinds.indexOf('chunk-open'));
    expect(harness.requestsMentioning('retried-twice').map((request) => request.status)).toEqual([
      529, 529, 200,
    ]);
  });

  it('publishes no turn-retry for a failure it does not retry', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'refused-once [[sim: error 400]]');
    await harness.awaitTurnEnd(tab.id, 'error');
    expect((harness.events.get(tab.id) ?? []).map((event) => event.event)).not.toContain(
      'turn-retry',
    );
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
    // The retry is announced after the cut text sealed, with the stream error's type as reason.
    const events = harness.events.get(tab.id) ?? [];
    const retryAt = events.findIndex((event) => event.event === 'turn-retry');
    expect(events[retryAt]?.data).toMatchObject({
      retry: 1,
      reason: 'stream failed: overloaded_error',
    });
    const cutSealAt = events.findIndex(
      (event) => event.event === 'chunk-seal' && event.data.chunk.id === interrupted!.id,
    );
    expect(cutSealAt).toBeGreaterThanOrEqual(0);
    expect(cutSealAt).toBeLessThan(retryAt);
    const attempts = harness.requestsMentioning('cut-stream');
    expect(attempts.length).toBe(2);
    expect(attempts.every((request) => request.status === 200)).toBe(true);

    await harness.send(tab.id, 'after-cut [[sim: text "still fine"]]');
    await harness.turnsDone(tab.id, 2);
    expect(harness.requestsMentioning('after-cut').map((request) => request.status)).toEqual([200]);
  });
});
