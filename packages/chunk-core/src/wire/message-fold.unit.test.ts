import { validateRequest } from '@chunklog/anthropic-sim';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Chunk } from '../schemas/chunk';
import {
  arbitraryChaoticLog,
  arbitraryChunkLog,
  ChunkLogWriter,
} from '../testing/arbitrary-chunk-log';
import { buildRequest, stripCacheControl } from './build-request';
import {
  buildMessages,
  EMPTY_TOOL_RESULT_TEXT,
  LEFT_OUT_MESSAGE_TEXT,
  MessageFold,
  MISSING_TOOL_RESULT_TEXT,
  PLACEHOLDER_USER_TEXT,
} from './message-fold';
import type { WireMessage } from './wire-types';

const serialize = (messages: WireMessage[]) => messages.map((message) => JSON.stringify(message));

function requestOf(messages: WireMessage[]) {
  return { model: 'claude-test', max_tokens: 4096, messages };
}

/** The log folded into messages, checked to make a request the API accepts. */
function foldValid(log: ChunkLogWriter): WireMessage[] {
  const messages = buildMessages(log.chunks);
  expect(validateRequest(requestOf(messages))).toEqual([]);
  return messages;
}

describe('buildMessages', () => {
  it('folds a step into one assistant message and one user message of its results', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('What is the weather in Paris and Rome?');
    log.thinking('Two cities.', 'sig-0');
    log.assistantText('Checking both.');
    log.toolCall('toolu_a', 'weather', { city: 'Paris' });
    log.toolCall('toolu_b', 'weather', { city: 'Rome' });
    log.toolResult('toolu_b', 'sunny');
    log.toolResult('toolu_a', { celsius: 21 });
    log.step = 1;
    log.assistantText('Paris 21°C, Rome sunny.');
    expect(buildMessages(log.chunks)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Two cities.', signature: 'sig-0' },
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_a', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_b', name: 'weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        // In the order of the calls, whatever order the results completed in.
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"celsius":21}' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'sunny' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Paris 21°C, Rome sunny.' }] },
    ]);
  });

  it('keeps thinking with a signature and empty text, and drops thinking without a signature', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('hi');
    log.thinking('', 'sig-empty');
    log.assistantText('Hello.');
    log.startTurn();
    log.userText('again');
    log.thinking('cut off befo');
    log.assistantText('Hello again.');
    const messages = buildMessages(log.chunks);
    expect(messages[1]?.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'sig-empty' },
      { type: 'text', text: 'Hello.' },
    ]);
    expect(messages[3]?.content).toEqual([{ type: 'text', text: 'Hello again.' }]);
  });

  it('replays redacted thinking as redacted_thinking', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('hi');
    log.redactedThinking('EmwKAhgB');
    log.assistantText('Hello.');
    expect(buildMessages(log.chunks)[1]?.content[0]).toEqual({
      type: 'redacted_thinking',
      data: 'EmwKAhgB',
    });
  });

  it('puts an interrupt after the step results, even when it was written before them', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('run it');
    log.toolCall('toolu_1', 'shell');
    log.userText('actually, stop after this');
    log.toolResult('toolu_1', 'ran');
    const messages = foldValid(log);
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ran' },
        { type: 'text', text: 'actually, stop after this' },
      ],
    });
  });

  it('gives a dangling tool call a synthesized error result (cancel mid-tool)', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('run both');
    log.toolCall('toolu_1');
    log.toolCall('toolu_2');
    log.toolResult('toolu_2', 'done');
    log.error('cancelled');
    log.startTurn();
    log.userText('next question');
    const messages = foldValid(log);
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: MISSING_TOOL_RESULT_TEXT,
          is_error: true,
        },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'done' },
        { type: 'text', text: 'next question' },
      ],
    });
  });

  it('closes unanswered calls before the next step of a crashed and resumed turn', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('go');
    log.toolCall('toolu_1');
    log.notice('worker restarted');
    log.step = 1;
    log.assistantText('Resuming.');
    log.toolResult('toolu_1', 'late result');
    const messages = foldValid(log);
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(messages[2]?.content[0]).toMatchObject({ tool_use_id: 'toolu_1', is_error: true });
  });

  it('sanitizes tool_use ids consistently for the call and its result, keeping them unique', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('go');
    log.toolCall('call:1');
    log.toolCall('call_1');
    log.toolCall('call:1');
    log.toolResult('call:1', 'a');
    log.toolResult('call_1', 'b');
    log.toolResult('call:1', 'c');
    const messages = foldValid(log);
    const ids = messages[1]?.content.map((block) => (block.type === 'tool_use' ? block.id : ''));
    expect(ids).toEqual(['call_1', 'call_1_2', 'call_1_3']);
    expect(messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'call_1', content: 'a' },
      { type: 'tool_result', tool_use_id: 'call_1_2', content: 'b' },
      { type: 'tool_result', tool_use_id: 'call_1_3', content: 'c' },
    ]);
  });

  it('drops empty texts and gives empty tool output a placeholder', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('go');
    log.userText('   ');
    log.assistantText('');
    log.toolCall('toolu_1');
    log.toolResult('toolu_1', '', true);
    const messages = buildMessages(log.chunks);
    expect(messages[0]?.content).toEqual([{ type: 'text', text: 'go' }]);
    expect(messages[1]?.content).toHaveLength(1);
    expect(messages[2]?.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: EMPTY_TOOL_RESULT_TEXT,
      is_error: true,
    });
  });

  it('starts with a user message even when the log does not', () => {
    expect(buildMessages([])).toEqual([
      { role: 'user', content: [{ type: 'text', text: PLACEHOLDER_USER_TEXT }] },
    ]);
    const log = new ChunkLogWriter();
    log.startTurn();
    log.assistantText('I begin.');
    log.userText('ok');
    const messages = buildMessages(log.chunks);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[0]?.content[0]).toEqual({ type: 'text', text: PLACEHOLDER_USER_TEXT });
  });

  it('drops thinking left last in an assistant message and trims a final prefill', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('go');
    log.thinking('only thought', 'sig');
    expect(buildMessages(log.chunks)).toHaveLength(1);
    log.assistantText('partial answer ', true);
    const messages = buildMessages(log.chunks);
    expect(messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'only thought', signature: 'sig' },
      { type: 'text', text: 'partial answer' },
    ]);
    log.startTurn();
    log.userText('continue');
    expect(buildMessages(log.chunks)[1]?.content[1]).toEqual({
      type: 'text',
      text: 'partial answer ',
    });
  });

  it('leaves out the texts of a turn that failed before the model answered them', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('Hello');
    log.assistantText('Hi.');
    log.startTurn();
    log.userText('A message the model fails on');
    const whileFailing = buildMessages(log.chunks);
    expect(whileFailing.at(-1)?.content).toEqual([
      { type: 'text', text: 'A message the model fails on' },
    ]);
    log.error('The model call failed: 400 invalid request');
    log.startTurn();
    log.userText('Something else');
    const messages = foldValid(log);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hi.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: LEFT_OUT_MESSAGE_TEXT },
          { type: 'text', text: 'Something else' },
        ],
      },
    ]);
    // Every message the failing turn's requests settled is still there, byte for byte.
    expect(serialize(messages).slice(0, 2)).toEqual(serialize(whileFailing).slice(0, 2));
  });

  it('keeps the texts of a failed turn that the model had answered, and other turns’ texts', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('Look it up');
    log.toolCall('toolu_a', 'lookup', {});
    log.toolResult('toolu_a', 'found');
    log.error('The model call failed: 529 overloaded');
    log.startTurn();
    log.userText('And then?');
    const messages = foldValid(log);
    expect(messages[0]?.content).toEqual([{ type: 'text', text: 'Look it up' }]);
    expect(messages.at(-1)?.content.at(-1)).toEqual({ type: 'text', text: 'And then?' });
    expect(JSON.stringify(messages)).toContain('found');
    expect(JSON.stringify(messages)).not.toContain(LEFT_OUT_MESSAGE_TEXT);
  });

  it('ignores chunks whose seq was already folded', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('one');
    log.assistantText('two');
    const fold = new MessageFold().appendAll(log.chunks).appendAll(log.chunks);
    expect(fold.messages()).toEqual(buildMessages(log.chunks));
    expect(fold.lastSeq).toBe(2);
  });
});

describe('buildMessages properties', () => {
  const options = [
    { model: 'm', maxTokens: 4096 },
    {
      model: 'm',
      maxTokens: 4096,
      system: 'You are terse.',
      tools: [{ name: 'lookup', input_schema: { type: 'object' as const } }],
      thinking: { budgetTokens: 1024 },
    },
  ];

  it('builds a request the API accepts from any worker-shaped log', () => {
    fc.assert(
      fc.property(arbitraryChunkLog, fc.constantFrom(...options), (chunks, option) => {
        const request = buildRequest({ ...option, chunks });
        expect(validateRequest(request)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('builds a request the API accepts from any log at all, and any prefix of it', () => {
    fc.assert(
      fc.property(arbitraryChaoticLog, fc.constantFrom(...options), (chunks, option) => {
        for (let end = 0; end <= chunks.length; end += 1) {
          const request = buildRequest({ ...option, chunks: chunks.slice(0, end) });
          expect(validateRequest(request)).toEqual([]);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('never changes the bytes of settled messages when the log grows', () => {
    const check = (chunks: Chunk[], seed: number) => {
      const full = serialize(buildMessages(chunks));
      const cut = seed % (chunks.length + 1);
      const fold = new MessageFold().appendAll(chunks.slice(0, cut));
      const earlier = serialize(fold.messages());
      const settled = fold.settledMessageCount();
      // Only the step in progress stays open: its assistant message and synthesized results
      // (and the placeholder before them while nothing has settled).
      expect(earlier.length - settled).toBeGreaterThanOrEqual(1);
      expect(earlier.length - settled).toBeLessThanOrEqual(settled === 0 ? 3 : 2);
      expect(full.slice(0, settled)).toEqual(earlier.slice(0, settled));
    };
    fc.assert(fc.property(arbitraryChunkLog, fc.nat(), check), { numRuns: 300 });
    fc.assert(fc.property(arbitraryChaoticLog, fc.nat(), check), { numRuns: 300 });
  });

  it('leaves only the last message open once a step has its results', () => {
    fc.assert(
      fc.property(arbitraryChunkLog, (chunks) => {
        const full = serialize(buildMessages(chunks));
        chunks.forEach((chunk, index) => {
          const next = chunks[index + 1];
          // A step boundary: a result (or interrupt) followed by the next step's first chunk.
          if (chunk.role === 'assistant' || next === undefined || next.role !== 'assistant') return;
          const earlier = serialize(buildMessages(chunks.slice(0, index + 1)));
          expect(full.slice(0, earlier.length - 1)).toEqual(earlier.slice(0, -1));
        });
      }),
      { numRuns: 200 },
    );
  });

  it('puts thinking before text and tool_use in every assistant message', () => {
    fc.assert(
      fc.property(arbitraryChunkLog, (chunks) => {
        for (const message of buildMessages(chunks)) {
          if (message.role !== 'assistant') continue;
          const types = message.content.map((block) => block.type);
          const firstOther = types.findIndex(
            (type) => type !== 'thinking' && type !== 'redacted_thinking',
          );
          expect(firstOther).toBeGreaterThanOrEqual(0);
          expect(
            types
              .slice(firstOther)
              .some((type) => type === 'thinking' || type === 'redacted_thinking'),
          ).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('folds incrementally to exactly what a full build gives', () => {
    fc.assert(
      fc.property(arbitraryChunkLog, fc.array(fc.nat(), { maxLength: 5 }), (chunks, cuts) => {
        const fold = new MessageFold();
        const points = [...new Set(cuts.map((cut) => cut % (chunks.length + 1)))].sort(
          (a, b) => a - b,
        );
        let folded = 0;
        for (const point of [...points, chunks.length]) {
          fold.appendAll(chunks.slice(folded, point));
          folded = point;
          expect(JSON.stringify(fold.messages())).toBe(
            JSON.stringify(buildMessages(chunks.slice(0, point))),
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  it('differs from the marked request only by cache_control', () => {
    fc.assert(
      fc.property(arbitraryChunkLog, (chunks) => {
        const request = buildRequest({ model: 'm', maxTokens: 4096, chunks });
        expect(JSON.stringify(stripCacheControl(request.messages))).toBe(
          JSON.stringify(buildMessages(chunks)),
        );
      }),
      { numRuns: 100 },
    );
  });
});
