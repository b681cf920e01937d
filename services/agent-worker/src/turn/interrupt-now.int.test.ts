import { type Chunk, type LiveEvent, liveEventSubject } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { assertGapFree, type Harness, useHarnessWithWorker } from '../testing/harness';
import { INTERRUPTED_TOOL_RESULT } from './turn-runner';

/**
 * An `interrupt` message sent while a step runs cuts that step at once: the model stream is
 * aborted (the partial text sealed as interrupted, a cut thinking or tool_use block dropped), a
 * running tool is aborted and answered with an error, then the message is appended and the model
 * answers it in the same turn. Every request the simulator received must be valid (200).
 */

type JsonObject = Record<string, unknown>;
interface WireMessage {
  role: string;
  content: JsonObject[];
}

/** Live events of a tab with the time each arrived, from a subscription of the test's own. */
async function timedEvents(h: Harness, tabId: string) {
  const seen: { at: number; event: LiveEvent }[] = [];
  for (const kind of ['chunk-open', 'chunk-delta', 'chunk-seal'] as const) {
    const subscription = await h.bus.subscribe(liveEventSubject(tabId, kind), (data) => {
      seen.push({ at: performance.now(), event: { event: kind, data } as LiveEvent });
    });
    h.onClose(() => void subscription.stop());
  }
  const until = async (match: (event: LiveEvent) => boolean, timeoutMs = 10_000) => {
    const started = performance.now();
    for (;;) {
      const found = seen.find((entry) => match(entry.event));
      if (found) return found;
      if (performance.now() - started > timeoutMs) throw new Error('event not seen in time');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  /** When the first delta of any of `ids` arrived. */
  const firstDeltaOf = (ids: readonly string[]) =>
    seen.find((entry) => entry.event.event === 'chunk-delta' && ids.includes(entry.event.data.id))
      ?.at;
  return { seen, until, firstDeltaOf };
}

/** Sends an interrupt and returns its chunk id and the moment it was accepted (the 202). */
async function interrupt(h: Harness, tabId: string, text: string) {
  const chunkId = await h.send(tabId, text, 'interrupt');
  return { chunkId, acceptedAt: performance.now() };
}

const shape = (log: readonly Chunk[]) =>
  log.map((chunk) => `${chunk.step}:${chunk.role}/${chunk.type}`);

/** Every model request of the turn (they all carry the opening message's marker), all accepted. */
function expectAllValid(h: Harness, marker: string) {
  const requests = h.requestsMentioning(marker);
  expect(requests.length).toBeGreaterThanOrEqual(2);
  expect(requests.map((request) => request.status)).toEqual(requests.map(() => 200));
  return requests.map((request) => request.body as { messages: WireMessage[] });
}

function stripCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripCacheControl);
  if (value && typeof value === 'object') {
    const { cache_control: _marker, ...rest } = value as JsonObject;
    return Object.fromEntries(
      Object.entries(rest).map(([key, inner]) => [key, stripCacheControl(inner)]),
    );
  }
  return value;
}

/** Milliseconds the simulator would take to stream the whole reply it planned for `marker`'s first request. */
function fullReplyMs(h: Harness, marker: string, tokensPerSecond: number): number {
  const outputTokens = h.requestsMentioning(marker)[0]?.usage?.output_tokens ?? 0;
  expect(outputTokens).toBeGreaterThan(0);
  return (outputTokens / tokensPerSecond) * 1000;
}

for (const bus of ['nats', 'memory'] as const) {
  describe(`an interrupt during a streamed text answer (${bus} bus)`, () => {
    const getHarness = useHarnessWithWorker(bus);

    it('seals the partial text as interrupted and answers the new message at once, in the same turn', async (context) => {
      const harness = getHarness(context);
      const tab = await harness.newTab();
      const events = await timedEvents(harness, tab.id);
      const marker = `interrupt-text-${bus}`;
      const openerId = await harness.send(tab.id, `${marker} [[sim: words 400]] [[sim: rate 40]]`);
      await events.until((event) => event.event === 'chunk-delta');

      const sent = await interrupt(
        harness,
        tab.id,
        'stop, answer this instead [[sim: text "Answering the new message."]]',
      );
      const log = await harness.awaitTurnEnd(tab.id, 'completed');
      assertGapFree(log);
      expect(shape(log)).toEqual([
        '0:user/text',
        '0:assistant/text',
        '0:user/text',
        '1:assistant/text',
      ]);
      expect(log[0]!.id).toBe(openerId);
      expect(log[2]!.id).toBe(sent.chunkId);
      expect(new Set(log.map((chunk) => chunk.turnId)).size).toBe(1);

      const partial = log[1]!;
      expect(partial.type === 'text' && partial.data.interrupted).toBe(true);
      const partialText = partial.type === 'text' ? partial.data.text : '';
      expect(partialText.length).toBeGreaterThan(0);
      expect(partialText.split(/\s+/).filter(Boolean).length).toBeLessThan(400);
      const answer = log[3]!;
      expect(answer.type === 'text' && answer.data).toEqual({ text: 'Answering the new message.' });

      // The new answer began far sooner than the first one would have finished.
      const firstDelta = events.firstDeltaOf([answer.id]);
      expect(firstDelta).toBeDefined();
      const latencyMs = firstDelta! - sent.acceptedAt;
      expect(latencyMs).toBeLessThan(fullReplyMs(harness, marker, 40) / 10);

      // Both requests were valid; the second begins with the first's message, byte for byte,
      // then the partial answer and the new message.
      const [first, second] = expectAllValid(harness, marker);
      expect(stripCacheControl(second!.messages[0])).toEqual(stripCacheControl(first!.messages[0]));
      expect(second!.messages.slice(1).map((message) => message.role)).toEqual([
        'assistant',
        'user',
      ]);
      expect(second!.messages[1]!.content).toEqual([{ type: 'text', text: partialText }]);
      expect(JSON.stringify(second!.messages[2])).toContain('stop, answer this instead');
    });
  });
}

describe('an interrupt during other blocks', () => {
  const getHarness = useHarnessWithWorker('nats');

  it('drops a thinking block cut before its signature, and the next step thinks afresh', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab({ thinking: { budgetTokens: 1024 }, maxTokens: 4096 });
    const events = await timedEvents(harness, tab.id);
    const marker = 'interrupt-thinking';
    const longThought = Array.from({ length: 300 }, (_, index) => `thought${index}`).join(' ');
    await harness.send(tab.id, `${marker} [[sim: think "${longThought}"]] [[sim: rate 40]]`);
    await events.until((event) => event.event === 'chunk-open' && event.data.type === 'thinking');
    await events.until((event) => event.event === 'chunk-delta');

    const sent = await interrupt(
      harness,
      tab.id,
      'never mind [[sim: think "a short plan"]] [[sim: text "Answering the interrupt."]] [[sim: rate 100000]]',
    );
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    assertGapFree(log);
    // The cut thinking had no signature yet: it is not kept, and step 0 left nothing.
    expect(shape(log)).toEqual([
      '0:user/text',
      '0:user/text',
      '1:assistant/thinking',
      '1:assistant/text',
    ]);
    expect(log[1]!.id).toBe(sent.chunkId);
    const thinking = log[2]!;
    expect(thinking.type === 'thinking' && thinking.data).toMatchObject({ text: 'a short plan' });
    expect(
      thinking.type === 'thinking' && 'signature' in thinking.data && thinking.data.signature,
    ).toBeTruthy();
    expect(log[3]!.type === 'text' && log[3]!.data.text).toBe('Answering the interrupt.');

    const firstDelta = events.firstDeltaOf([log[2]!.id, log[3]!.id]);
    expect(firstDelta! - sent.acceptedAt).toBeLessThan(fullReplyMs(harness, marker, 40) / 10);

    // The second request is one user message: the opening text, then the interrupt.
    const [, second] = expectAllValid(harness, marker);
    expect(second!.messages).toHaveLength(1);
    expect(second!.messages[0]!.content.map((block) => block.type)).toEqual(['text', 'text']);
  });

  it('aborts a running tool, answers its call with an error, then answers the new message', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    const events = await timedEvents(harness, tab.id);
    const marker = 'interrupt-running-tool';
    const toolMs = 20_000;
    await harness.send(tab.id, `${marker} [[sim: tool sleep {"milliseconds":${toolMs}}]]`);
    await events.until(
      (event) => event.event === 'chunk-seal' && event.data.chunk.type === 'tool_call',
    );

    const sent = await interrupt(harness, tab.id, 'forget it [[sim: text "Stopped waiting."]]');
    const [done] = await harness.turnsDone(tab.id, 1, toolMs / 2);
    expect(done?.event === 'turn-done' && done.data.reason).toBe('completed');
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(shape(log)).toEqual([
      '0:user/text',
      '0:assistant/tool_call',
      '0:tool/tool_result',
      '0:user/text',
      '1:assistant/text',
    ]);
    const call = log[1]!;
    const result = log[2]!;
    expect(result.type === 'tool_result' && result.data).toMatchObject({
      callId: call.type === 'tool_call' ? call.data.callId : '',
      isError: true,
      result: INTERRUPTED_TOOL_RESULT,
    });
    expect(log[3]!.id).toBe(sent.chunkId);
    expect(log[4]!.type === 'text' && log[4]!.data.text).toBe('Stopped waiting.');

    const firstDelta = events.firstDeltaOf([log[4]!.id]);
    expect(firstDelta! - sent.acceptedAt).toBeLessThan(toolMs / 10);

    // The step after the interrupt sent the error result first, the new message after it.
    const [, second] = expectAllValid(harness, marker);
    const final = second!.messages.at(-1)!;
    expect(final.content.map((block) => block.type)).toEqual(['tool_result', 'text']);
    expect(final.content[0]).toMatchObject({ is_error: true });
  });

  it('drops a tool call whose input was still streaming', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    const marker = 'interrupt-streaming-tool-call';
    const expression = Array.from({ length: 200 }, (_, index) => `${index}`).join('+');
    await harness.send(
      tab.id,
      `${marker} [[sim: tool calculator {"expression":"${expression}"}]] [[sim: rate 20]]`,
    );
    // Tool calls have no open phase: wait until the simulator is streaming the call's input.
    const deadline = Date.now() + 10_000;
    while (harness.requestsMentioning(marker)[0]?.status !== 200) {
      if (Date.now() > deadline) throw new Error('the model call did not start');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));

    const sent = await interrupt(harness, tab.id, 'skip that [[sim: rate 100000]]');
    const [done] = await harness.turnsDone(tab.id, 1, 10_000);
    expect(done?.event === 'turn-done' && done.data.reason).toBe('completed');
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    // Step 0 left nothing: its only block, the call, was cut before its input was complete.
    expect(shape(log).slice(0, 2)).toEqual(['0:user/text', '0:user/text']);
    expect(log[1]!.id).toBe(sent.chunkId);
    expect(log.filter((chunk) => chunk.step === 0 && chunk.role === 'assistant')).toEqual([]);
    // So the next request is one user message, the opening text then the interrupt (the
    // simulator, reading its directives from both, calls the tool again: a step of its own).
    const [, second] = expectAllValid(harness, marker);
    expect(second!.messages).toHaveLength(1);
    expect(second!.messages[0]!.content.map((block) => block.type)).toEqual(['text', 'text']);
  });
});
