import type { Chunk, LiveEvent, Usage } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { assertGapFree, useHarnessWithWorker } from '../testing/harness';

/** A system prompt long enough to be cacheable (the simulator's minimum is 1024 tokens). */
const longSystem = `You are a careful assistant. ${'Always check arithmetic with the calculator tool. '.repeat(160)}`;

type JsonObject = Record<string, unknown>;

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

function sealedChunks(events: readonly LiveEvent[]): Chunk[] {
  return events.flatMap((event) => (event.event === 'chunk-seal' ? [event.data.chunk] : []));
}

for (const bus of ['nats', 'memory'] as const) {
  describe(`a multi-step tool turn (Postgres + ${bus === 'nats' ? 'NATS' : 'the in-process bus'})`, () => {
    const getHarness = useHarnessWithWorker(bus);

    it('persists, publishes and sends the same steps, each request extending the previous one byte for byte', async (context) => {
      const harness = getHarness(context);
      const tab = await harness.newTab({ system: longSystem });
      const chunkId = await harness.send(
        tab.id,
        'Work it out. [[sim: tool calculator {"expression":"6*7"}]] [[sim: steps 3]]',
      );
      const [done] = await harness.turnsDone(tab.id, 1);
      expect(done?.event === 'turn-done' && done.data.reason).toBe('completed');

      // The log: the user chunk, three tool steps (call + result), then the answer.
      const log = await harness.store.readAll(tab.id);
      assertGapFree(log);
      expect(log.map((chunk) => `${chunk.step}:${chunk.role}/${chunk.type}`)).toEqual([
        '0:user/text',
        '0:assistant/tool_call',
        '0:tool/tool_result',
        '1:assistant/tool_call',
        '1:tool/tool_result',
        '2:assistant/tool_call',
        '2:tool/tool_result',
        '3:assistant/text',
      ]);
      expect(log[0]!.id).toBe(chunkId);
      expect(new Set(log.map((chunk) => chunk.turnId)).size).toBe(1);
      for (const chunk of log) {
        if (chunk.type === 'tool_result')
          expect(chunk.data).toMatchObject({ result: { value: 42 }, isError: false });
      }

      // The events: turn-start, seals equal to the log in order, deltas that rebuild each text, turn-done.
      const events = harness.events.get(tab.id) ?? [];
      expect(events[0]).toEqual({
        event: 'turn-start',
        data: { tabId: tab.id, turnId: log[0]!.turnId },
      });
      expect(events.at(-1)?.event).toBe('turn-done');
      expect(sealedChunks(events)).toEqual(log);
      const answer = log.at(-1)!;
      const deltas = events.flatMap((event) =>
        event.event === 'chunk-delta' && event.data.id === answer.id ? [event.data] : [],
      );
      expect(
        events.some((event) => event.event === 'chunk-open' && event.data.id === answer.id),
      ).toBe(true);
      let rebuilt = '';
      for (const delta of deltas) {
        expect(delta.offset).toBe(rebuilt.length);
        rebuilt += delta.text;
      }
      expect(answer.type === 'text' && answer.data.text).toBe(rebuilt);
      const sealIndex = events.findIndex(
        (event) => event.event === 'chunk-seal' && event.data.chunk.id === answer.id,
      );
      const lastDeltaIndex = events.findLastIndex(
        (event) => event.event === 'chunk-delta' && event.data.id === answer.id,
      );
      expect(sealIndex).toBeGreaterThan(lastDeltaIndex);

      // The requests: four steps; each repeats the previous one's messages byte for byte.
      const requests = harness.simulator.requests.filter(
        (request) =>
          request.path === '/v1/messages' &&
          JSON.stringify(request.body).includes(tab.id) === false,
      );
      const mine = requests.filter((request) =>
        JSON.stringify((request.body as { messages: unknown[] }).messages[0]).includes(
          'Work it out.',
        ),
      );
      expect(mine.map((request) => request.status)).toEqual([200, 200, 200, 200]);
      for (let index = 1; index < mine.length; index++) {
        const previous = mine[index - 1]!.body as {
          messages: unknown[];
          system: unknown;
          tools: unknown;
        };
        const current = mine[index]!.body as {
          messages: unknown[];
          system: unknown;
          tools: unknown;
        };
        expect(JSON.stringify(current.tools)).toBe(JSON.stringify(previous.tools));
        expect(JSON.stringify(current.system)).toBe(JSON.stringify(previous.system));
        expect(current.messages.length).toBe(previous.messages.length + 2);
        expect(
          JSON.stringify(stripCacheControl(current.messages.slice(0, previous.messages.length))),
        ).toBe(JSON.stringify(stripCacheControl(previous.messages)));
      }
      // The tool_use ids the model saw are the call ids in the log.
      const lastMessages = (
        mine.at(-1)!.body as { messages: { content: { type: string; id?: string }[] }[] }
      ).messages;
      const sentCallIds = lastMessages.flatMap((message) =>
        message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])),
      );
      expect(sentCallIds).toEqual(
        log.flatMap((chunk) => (chunk.type === 'tool_call' ? [chunk.data.callId] : [])),
      );

      // The cache: every later step reads more than the one before.
      const reads = mine.map((request) => request.usage?.cache_read_input_tokens ?? 0);
      for (let index = 2; index < reads.length; index++)
        expect(reads[index]!).toBeGreaterThan(reads[index - 1]!);
      expect(reads[1]!).toBeGreaterThan(0);

      // Usage: turn-done sums the steps, and the tab's total got it.
      const expected: Usage = {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      };
      for (const request of mine) {
        expected.inputTokens += request.usage?.input_tokens ?? 0;
        expected.outputTokens += request.usage?.output_tokens ?? 0;
        expected.cacheReadInputTokens += request.usage?.cache_read_input_tokens ?? 0;
        expected.cacheCreationInputTokens += request.usage?.cache_creation_input_tokens ?? 0;
      }
      expect(done?.event === 'turn-done' && done.data.usage).toEqual(expected);
      const stored = await harness.store.getTab(tab.id);
      expect(stored.usage).toEqual(expected);
      expect(stored.status).toBe('idle');
    });

    it('stops at the step cap with every call answered and turn-done max_steps', async (context) => {
      const harness = getHarness(context);
      const tab = await harness.newTab({ maxSteps: 2 });
      await harness.send(tab.id, 'capped [[sim: tool get_time {}]] [[sim: steps 5]]');
      const log = await harness.awaitTurnEnd(tab.id, 'max_steps');
      expect(log.map((chunk) => `${chunk.step}:${chunk.type}`)).toEqual([
        '0:text',
        '0:tool_call',
        '0:tool_result',
        '1:tool_call',
        '1:tool_result',
        '1:system',
      ]);
      expect(log.at(-1)!.data).toEqual({
        kind: 'max-steps',
        text: "The turn stopped after 2 model steps, the tab's step cap.",
      });
    });

    it('replays signed thinking byte for byte across steps when thinking is on', async (context) => {
      const harness = getHarness(context);
      const tab = await harness.newTab({ thinking: { budgetTokens: 1024 }, maxTokens: 4096 });
      await harness.send(tab.id, 'think-then-tool [[sim: tool calculator {"expression":"1+1"}]]');
      const log = await harness.awaitTurnEnd(tab.id, 'completed');
      expect(log.map((chunk) => `${chunk.step}:${chunk.type}`)).toEqual([
        '0:text',
        '0:thinking',
        '0:tool_call',
        '0:tool_result',
        '1:thinking',
        '1:text',
      ]);
      const thinking = log[1]!;
      expect(
        thinking.type === 'thinking' && 'signature' in thinking.data && thinking.data.signature,
      ).toBeTruthy();
      // The simulator checks signatures: the second step was accepted with the first step's thinking in it.
      const requests = harness.simulator.requests.filter((request) =>
        JSON.stringify(request.body).includes('think-then-tool'),
      );
      expect(requests.map((request) => request.status)).toEqual([200, 200]);
      const replayed = (requests[1]!.body as { messages: { content: JsonObject[] }[] }).messages[1]!
        .content[0];
      expect(replayed).toEqual({
        type: 'thinking',
        thinking: thinking.type === 'thinking' && 'text' in thinking.data ? thinking.data.text : '',
        signature:
          thinking.type === 'thinking' && 'signature' in thinking.data
            ? thinking.data.signature
            : '',
      });
    });
  });
}
