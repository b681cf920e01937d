import { randomUUID } from 'node:crypto';
import type { Chunk, LiveEvent, TabConfig } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { assertGapFree, type Harness, openingChunk, useHarness } from '../testing/harness';
import type { Worker } from '../worker';

let worker: Worker | undefined;
const harnessFor = useHarness('nats', async (harness) => {
  worker = await harness.startWorker();
});

const gated: TabConfig = { approval: { tools: ['calculator'] } };
const CALC = '[[sim: tool calculator {"expression":"6*7"}]]';
const TIME = '[[sim: tool get_time {}]]';

const of = <T extends Chunk['type']>(log: readonly Chunk[], type: T) =>
  log.filter((chunk): chunk is Extract<Chunk, { type: T }> => chunk.type === type);

const doneReasons = (harness: Harness, tabId: string) =>
  (harness.events.get(tabId) ?? []).flatMap((event) =>
    event.event === 'turn-done' ? [event.data.reason] : [],
  );

/** Sends `text` on a new tab and waits for its turn to pause; returns the tab and its calls. */
async function pausedTab(harness: Harness, text: string, config: TabConfig = gated) {
  const tab = await harness.newTab(config);
  await harness.send(tab.id, text);
  const [done] = await harness.turnsDone(tab.id, 1);
  expect(done?.event === 'turn-done' && done.data.reason).toBe('awaiting_approval');
  const waiting = (await harness.store.getTab(tab.id)).waiting;
  expect(waiting).not.toBeNull();
  return { tab, waiting: waiting! };
}

describe('tool calls that wait for a person', () => {
  it('pauses holding nothing, runs the free call, and on approval runs the waiting one and goes on', async (context) => {
    const harness = harnessFor(context);
    // A system prompt long enough for the prompt cache to take it.
    const system = `You check sums. ${'Answer with the figure and nothing else. '.repeat(150)}`;
    const { tab, waiting } = await pausedTab(harness, `Sum and time ${CALC} ${TIME}`, {
      ...gated,
      system,
    });

    // The pause: no lease, no turn held, the tab says what waits.
    const paused = await harness.store.getTab(tab.id);
    expect(paused.status).toBe('waiting');
    expect(paused.activeTurnId).toBeNull();
    expect(await harness.store.getLease(tab.id)).toBeNull();
    expect(worker!.runningTabs()).not.toContain(tab.id);
    expect(waiting.calls).toEqual([
      expect.objectContaining({ name: 'calculator', arguments: { expression: '6*7' } }),
    ]);
    let log = await harness.store.readAll(tab.id);
    expect(of(log, 'tool_call').map((chunk) => chunk.data.name)).toEqual([
      'calculator',
      'get_time',
    ]);
    expect(of(log, 'approval_request').map((chunk) => chunk.data.callId)).toEqual([
      waiting.calls[0]!.callId,
    ]);
    // The free call ran; the waiting one has no result yet.
    expect(of(log, 'tool_result').map((chunk) => chunk.data.name)).toEqual(['get_time']);
    const requested = harness.events
      .get(tab.id)!
      .find(
        (event): event is Extract<LiveEvent, { event: 'approval-requested' }> =>
          event.event === 'approval-requested',
      );
    expect(requested?.data.calls.map((call) => call.callId)).toEqual([waiting.calls[0]!.callId]);
    const requestsBefore = harness.requestsMentioning('Sum and time').length;

    expect(
      await harness.decide(tab.id, [{ callId: waiting.calls[0]!.callId, decision: 'approve' }]),
    ).toEqual([]);
    await harness.turnsDone(tab.id, 2);
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval', 'completed']);
    log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(new Set(log.map((chunk) => chunk.turnId)).size).toBe(1);
    expect(of(log, 'approval_decision').map((chunk) => chunk.data)).toEqual([
      expect.objectContaining({ decision: 'approve', decidedBy: 'test', name: 'calculator' }),
    ]);
    const results = of(log, 'tool_result').map((chunk) => chunk.data);
    expect(results).toEqual([
      expect.objectContaining({ name: 'get_time', isError: false }),
      expect.objectContaining({ name: 'calculator', isError: false, result: { value: 42 } }),
    ]);
    expect((await harness.store.getTab(tab.id)).status).toBe('idle');
    expect((await harness.store.getTab(tab.id)).waiting).toBeNull();

    // The request after the decision answers the calls in the model's order, with every earlier
    // byte kept, so the cache reads the whole prefix.
    const requests = harness.requestsMentioning('Sum and time');
    expect(requests.length).toBe(requestsBefore + 1);
    const last = requests.at(-1)!.body as {
      messages: { role: string; content: { type: string; tool_use_id?: string; id?: string }[] }[];
    };
    const uses = last.messages.at(-2)!.content.filter((block) => block.type === 'tool_use');
    const answers = last.messages.at(-1)!.content.filter((block) => block.type === 'tool_result');
    expect(answers.map((block) => block.tool_use_id)).toEqual(uses.map((block) => block.id));
    const firstBody = JSON.stringify((requests[0]!.body as { messages: unknown[] }).messages);
    expect(JSON.stringify(last.messages).startsWith(firstBody.slice(0, -1))).toBe(true);
    const resumed = harness.events
      .get(tab.id)!
      .filter((event) => event.event === 'turn-done')
      .at(-1)!;
    const usage = resumed.event === 'turn-done' ? resumed.data.usage : null;
    const prompt =
      usage!.inputTokens + usage!.cacheReadInputTokens + usage!.cacheCreationInputTokens;
    expect(usage!.cacheReadInputTokens / prompt).toBeGreaterThanOrEqual(0.9);
  });

  it('answers a denied call with an error result carrying the reason, and the model goes on', async (context) => {
    const harness = harnessFor(context);
    const { tab, waiting } = await pausedTab(harness, `Deny me ${CALC}`);
    await harness.decide(tab.id, [
      { callId: waiting.calls[0]!.callId, decision: 'deny', reason: 'not today' },
    ]);
    await harness.turnsDone(tab.id, 2);
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval', 'completed']);
    const log = await harness.store.readAll(tab.id);
    expect(of(log, 'tool_result').map((chunk) => chunk.data)).toEqual([
      expect.objectContaining({
        isError: true,
        result: 'The tool call was denied by the user: not today',
      }),
    ]);
    expect(of(log, 'text').at(-1)?.role).toBe('assistant');
  });

  it('runs an approved call with the edited input, and refuses a second decision with the first', async (context) => {
    const harness = harnessFor(context);
    const { tab, waiting } = await pausedTab(harness, `Edit me ${CALC}`);
    const callId = waiting.calls[0]!.callId;
    await harness.decide(tab.id, [{ callId, decision: 'approve', input: { expression: '2+2' } }]);
    const second = await harness.decide(tab.id, [{ callId, decision: 'deny' }]).catch(() => null);
    // Either refused with the first decision, or (the turn resumed already) nothing waits.
    if (second !== null) expect(second).toEqual([expect.objectContaining({ decision: 'approve' })]);
    await harness.turnsDone(tab.id, 2);
    const log = await harness.store.readAll(tab.id);
    expect(of(log, 'tool_result').map((chunk) => chunk.data.result)).toEqual([{ value: 4 }]);
    expect(of(log, 'approval_decision')[0]?.data.input).toEqual({ expression: '2+2' });
    // The model's own call stays as it asked, so the prompt's bytes do not change.
    expect(of(log, 'tool_call')[0]?.data.arguments).toEqual({ expression: '6*7' });
  });

  it('waits for every waiting call of a step before it resumes', async (context) => {
    const harness = harnessFor(context);
    const { tab, waiting } = await pausedTab(
      harness,
      `Two sums ${CALC} [[sim: tool calculator {"expression":"1+1"}]]`,
    );
    expect(waiting.calls).toHaveLength(2);
    await harness.decide(tab.id, [{ callId: waiting.calls[1]!.callId, decision: 'approve' }]);
    // The wake-up finds one call undecided: the turn stays paused.
    await expect
      .poll(async () => (await harness.store.getTab(tab.id)).status, { timeout: 5_000 })
      .toBe('waiting');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval']);
    await harness.decide(tab.id, [{ callId: waiting.calls[0]!.callId, decision: 'approve' }]);
    await harness.turnsDone(tab.id, 2);
    const log = await harness.store.readAll(tab.id);
    expect(of(log, 'tool_result').map((chunk) => chunk.data.result)).toEqual([
      { value: 42 },
      { value: 2 },
    ]);
  });

  it('a cancel denies the waiting calls and ends the turn cancelled', async (context) => {
    const harness = harnessFor(context);
    const { tab } = await pausedTab(harness, `Cancel me ${CALC}`);
    await harness.cancel(tab.id);
    await harness.turnsDone(tab.id, 2);
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval', 'cancelled']);
    const log = await harness.store.readAll(tab.id);
    expect(of(log, 'approval_decision')[0]?.data).toMatchObject({
      decision: 'deny',
      reason: 'cancelled',
      decidedBy: 'system',
    });
    expect(of(log, 'tool_result')[0]?.data.isError).toBe(true);
    expect((await harness.store.getTab(tab.id)).status).toBe('idle');
  });

  it('an interrupting message denies the waiting calls and is answered in the same turn', async (context) => {
    const harness = harnessFor(context);
    const { tab } = await pausedTab(harness, `Interrupt me ${CALC}`);
    await harness.send(tab.id, 'never mind, say hi', 'interrupt');
    await harness.turnsDone(tab.id, 2);
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval', 'completed']);
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(of(log, 'approval_decision')[0]?.data.reason).toBe('interrupted');
    const texts = of(log, 'text');
    expect(texts.at(-2)?.data.text).toBe('never mind, say hi');
    expect(texts.at(-1)?.role).toBe('assistant');
    expect(new Set(log.map((chunk) => chunk.turnId)).size).toBe(1);
  });

  it('an enqueued message waits behind the decision and then gets a turn of its own', async (context) => {
    const harness = harnessFor(context);
    const { tab, waiting } = await pausedTab(harness, `Queue behind ${CALC}`);
    const queued = await harness.send(tab.id, 'after the decision', 'enqueue');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await harness.store.getTab(tab.id)).status).toBe('waiting');
    expect((await harness.store.readAll(tab.id)).some((chunk) => chunk.id === queued)).toBe(false);
    await harness.decide(tab.id, [{ callId: waiting.calls[0]!.callId, decision: 'approve' }]);
    await harness.turnsDone(tab.id, 3);
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval', 'completed', 'completed']);
    const log = await harness.store.readAll(tab.id);
    const opener = log.find((chunk) => chunk.id === queued)!;
    expect(opener.turnId).not.toBe(log[0]!.turnId);
    expect(log.findIndex((chunk) => chunk.id === queued)).toBeGreaterThan(
      log.findIndex((chunk) => chunk.type === 'approval_decision'),
    );
  });

  it('denies undecided calls with reason expired once the policy’s time is up', async (context) => {
    const harness = harnessFor(context);
    const { tab } = await pausedTab(harness, `Expire me ${CALC}`, {
      approval: { tools: ['calc*'], expiresAfterSeconds: 1 },
    });
    expect((await harness.store.getTab(tab.id)).waiting?.expiresAt).toBeGreaterThan(
      Date.now() - 1_000,
    );
    await harness.turnsDone(tab.id, 2, 10_000);
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval', 'completed']);
    const log = await harness.store.readAll(tab.id);
    expect(of(log, 'approval_decision')[0]?.data).toMatchObject({ reason: 'expired' });
    expect(of(log, 'tool_result')[0]?.data.result).toMatch(/expired/);
  });
});

describe('a holder that dies pausing the turn', () => {
  const harnessAlone = useHarness('nats');

  it('is taken over as a paused turn: its run ends awaiting approval, the calls keep waiting, a decision resumes it', async (context) => {
    const harness = harnessAlone(context);
    const { store } = harness;
    const tab = await harness.newTab(gated);
    const turnId = randomUUID();
    // A worker that sealed the call and its request, recorded the pause and died before it let
    // the tab go.
    await store.acquireLease(tab.id, { owner: 'dead-worker', turnId, leaseMs: 300 });
    await store.append(tab.id, [
      openingChunk(tab.id, turnId, `Died pausing ${CALC}`),
      {
        id: randomUUID(),
        tabId: tab.id,
        turnId,
        step: 0,
        role: 'assistant',
        type: 'tool_call',
        data: { callId: 'toolu_dead_1', name: 'calculator', arguments: { expression: '6*7' } },
      },
      {
        id: randomUUID(),
        tabId: tab.id,
        turnId,
        step: 0,
        role: 'system',
        type: 'approval_request',
        data: {
          callId: 'toolu_dead_1',
          name: 'calculator',
          arguments: { expression: '6*7' },
          expiresAt: null,
        },
      },
    ]);
    await store.setWaiting(tab.id, {
      owner: 'dead-worker',
      waiting: {
        turnId,
        step: 0,
        cancelGeneration: 0,
        expiresAt: null,
        calls: [{ callId: 'toolu_dead_1', name: 'calculator', arguments: { expression: '6*7' } }],
      },
    });
    await harness.startWorker();
    const [done] = await harness.turnsDone(tab.id, 1);
    expect(done?.event === 'turn-done' && done.data).toMatchObject({
      turnId,
      reason: 'awaiting_approval',
    });
    expect((await store.getTab(tab.id)).status).toBe('waiting');
    // No error result: the call still waits for a person.
    expect(of(await store.readAll(tab.id), 'tool_result')).toEqual([]);
    await harness.decide(tab.id, [{ callId: 'toolu_dead_1', decision: 'approve' }]);
    await harness.turnsDone(tab.id, 2);
    const events = harness.events.get(tab.id) ?? [];
    // The resumed run announced itself once; the dead run's end was the takeover's.
    expect(events.filter((event) => event.event === 'turn-start')).toHaveLength(1);
    expect(doneReasons(harness, tab.id)).toEqual(['awaiting_approval', 'completed']);
    expect(
      of(await store.readAll(tab.id), 'tool_result').map((chunk) => chunk.data.result),
    ).toEqual([{ value: 42 }]);
  });
});

describe('a decision while no worker runs', () => {
  const harnessAlone = useHarness('nats');

  it('is kept, and the turn resumes when a worker starts', async (context) => {
    const harness = harnessAlone(context);
    const first = await harness.startWorker();
    const { tab, waiting } = await pausedTab(harness, `Keep it ${CALC}`);
    await first.stop();
    await harness.decide(tab.id, [{ callId: waiting.calls[0]!.callId, decision: 'approve' }]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await harness.store.getTab(tab.id)).status).toBe('waiting');
    await harness.startWorker();
    await harness.turnsDone(tab.id, 2);
    const log = await harness.store.readAll(tab.id);
    expect(of(log, 'tool_result').map((chunk) => chunk.data.result)).toEqual([{ value: 42 }]);
    expect((await harness.store.getTab(tab.id)).status).toBe('idle');
  });
});
