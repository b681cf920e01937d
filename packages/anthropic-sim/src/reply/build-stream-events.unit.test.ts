import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ReplyBlock } from './assistant-message';
import { buildStreamEvents, type StreamEvent } from './build-stream-events';

const fixturesDirectory = join(import.meta.dirname, '../../../../test/fixtures/anthropic-streams');
type Payload = Record<string, unknown> & { type: string };

function messageOf(content: ReplyBlock[], stopReason: AssistantMessage['stop_reason']) {
  return {
    id: 'msg_test',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-6',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    stop_details: null,
    usage: {
      input_tokens: 12,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: 30,
      service_tier: 'standard',
      inference_geo: 'not_available',
    },
  } satisfies AssistantMessage;
}

/** Folds recorded payloads into the final content, as the docs describe the accumulation. */
function contentOfRecording(payloads: Payload[]): ReplyBlock[] {
  const blocks: Record<string, unknown>[] = [];
  const json: string[] = [];
  for (const payload of payloads) {
    const index = payload.index as number;
    if (payload.type === 'content_block_start') {
      blocks[index] = { ...(payload.content_block as object) };
      json[index] = '';
    } else if (payload.type === 'content_block_delta') {
      const delta = payload.delta as Record<string, string | undefined>;
      const block = blocks[index] as Record<string, string>;
      if (delta.type === 'text_delta') block.text = `${block.text}${delta.text}`;
      if (delta.type === 'thinking_delta') block.thinking = `${block.thinking}${delta.thinking}`;
      if (delta.type === 'signature_delta') block.signature = delta.signature ?? '';
      if (delta.type === 'input_json_delta') json[index] = `${json[index]}${delta.partial_json}`;
    } else if (payload.type === 'content_block_stop') {
      const block = blocks[index] as Record<string, unknown>;
      if (block.type === 'tool_use') {
        block.input = json[index] ? JSON.parse(json[index] ?? '') : {};
        block.caller = { type: 'direct' };
      }
    }
  }
  return blocks as ReplyBlock[];
}

/** Event kinds with pings dropped and runs of the same delta kind collapsed into one. */
function grammar(payloads: { type: string; delta?: unknown; content_block?: unknown }[]) {
  const kinds = payloads
    .filter((payload) => payload.type !== 'ping')
    .map((payload) => {
      const delta = payload.delta as { type?: string } | undefined;
      const block = payload.content_block as { type?: string } | undefined;
      if (payload.type === 'content_block_delta') return `delta:${delta?.type}`;
      if (payload.type === 'content_block_start') return `start:${block?.type}`;
      return payload.type;
    });
  return kinds.filter((kind, index) => kind !== kinds[index - 1] || !kind.startsWith('delta:'));
}

async function accumulateWithSdk(events: StreamEvent[]) {
  const lines = events.map((event) => `${JSON.stringify(event.data)}\n`).join('');
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
  const final = await MessageStream.fromReadableStream(body).finalMessage();
  const { parsed_output: _parsed, ...message } = final as typeof final & {
    parsed_output?: unknown;
  };
  return message;
}

describe('buildStreamEvents', () => {
  const fixtures = readdirSync(fixturesDirectory).filter((name) => name.endsWith('.jsonl'));

  it.each(fixtures)('follows the event grammar of the recorded %s', (name) => {
    const recorded = readFileSync(join(fixturesDirectory, name), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Payload);
    const stop = recorded.find((payload) => payload.type === 'message_delta')?.delta as {
      stop_reason: AssistantMessage['stop_reason'];
    };
    const events = buildStreamEvents(messageOf(contentOfRecording(recorded), stop.stop_reason), {
      requestId: 'req_test',
    });
    const ours = events.map((event) => event.data as Payload);
    expect(grammar(ours)).toEqual(grammar(recorded));
    for (const event of events) expect(event.event).toBe(event.data.type);

    const recordedStart = recorded[0]?.message as { usage: object };
    const ourStart = ours[0]?.message as { usage: object };
    expect(Object.keys(ourStart)).toEqual(expect.arrayContaining(Object.keys(recordedStart)));
    expect(Object.keys(ourStart.usage)).toEqual(
      expect.arrayContaining(Object.keys(recordedStart.usage)),
    );
    const recordedDelta = recorded.find((payload) => payload.type === 'message_delta');
    const ourDelta = ours.find((payload) => payload.type === 'message_delta');
    expect(Object.keys(ourDelta?.usage as object).sort()).toEqual(
      Object.keys(recordedDelta?.usage as object).sort(),
    );
  });

  it('streams any message so that the SDK accumulates exactly that message', async () => {
    const text = fc.string({ minLength: 1, maxLength: 80 }).filter((value) => value.trim() !== '');
    const block = fc.oneof(
      text.map((value): ReplyBlock => ({ type: 'text', text: value })),
      fc
        .record({
          id: fc.stringMatching(/^toolu_[a-zA-Z0-9_-]{1,12}$/),
          name: fc.stringMatching(/^[a-zA-Z0-9_-]{1,16}$/),
          input: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })),
        })
        .map((tool): ReplyBlock => ({ type: 'tool_use', ...tool, caller: { type: 'direct' } })),
    );
    const content = fc
      .tuple(
        fc.option(fc.string({ maxLength: 80 }), { nil: undefined }),
        fc.array(block, { minLength: 1, maxLength: 4 }),
      )
      .map(([thinking, rest]): ReplyBlock[] =>
        thinking === undefined
          ? rest
          : [{ type: 'thinking', thinking, signature: `sig-${thinking.length}` }, ...rest],
      );
    await fc.assert(
      fc.asyncProperty(content, async (blocks) => {
        const message = messageOf(blocks, 'end_turn');
        const events = buildStreamEvents(message, { requestId: 'req_test' });
        // JSON round trip: `-0` and the like come back as the wire would carry them.
        expect(await accumulateWithSdk(events)).toEqual(JSON.parse(JSON.stringify(message)));
        events.forEach((event, position) => {
          const delta = event.data.delta as { type?: string } | undefined;
          if (delta?.type === 'signature_delta') {
            expect(events[position + 1]?.event).toBe('content_block_stop');
          }
        });
      }),
      { numRuns: 150 },
    );
  });

  it('replaces the rest of the stream by an error event after N deltas', () => {
    const message = messageOf(
      [{ type: 'text', text: 'one two three four five six seven eight nine ten' }],
      'end_turn',
    );
    for (const afterDeltas of [0, 1, 3]) {
      const events = buildStreamEvents(message, {
        requestId: 'req_test',
        streamError: { errorType: 'overloaded_error', afterDeltas },
      });
      expect(events.filter((event) => event.event === 'content_block_delta')).toHaveLength(
        afterDeltas,
      );
      expect(events.at(-1)?.data).toEqual({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
        request_id: 'req_test',
      });
      expect(events.some((event) => event.event === 'message_stop')).toBe(false);
    }
  });
});
