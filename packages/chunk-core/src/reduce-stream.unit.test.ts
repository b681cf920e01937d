import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
// The SDK's own accumulator is the oracle for "the blocks the API sent"; only this test uses it.
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  interruptedBlock,
  reduceStream,
  type StreamChunkBody,
  type StreamOperation,
} from './reduce-stream';
import { ChunkLogWriter } from './testing/arbitrary-chunk-log';
import { buildMessages } from './wire/message-fold';

const fixturesDirectory = join(import.meta.dirname, '../../../test/fixtures/anthropic-streams');
const fixtureNames = readdirSync(fixturesDirectory).filter((name) => name.endsWith('.jsonl'));

/** A tool_use block opening at index 0. */
const toolUseStart = (id: string) => ({
  type: 'content_block_start',
  index: 0,
  content_block: { type: 'tool_use', id, name: 'lookup', input: {} },
});
/** A piece of the JSON input of the block at index 0. */
const inputJson = (partialJson: string) => ({
  type: 'content_block_delta',
  index: 0,
  delta: { type: 'input_json_delta', partial_json: partialJson },
});

function readFixture(name: string): { raw: string; events: Record<string, unknown>[] } {
  const raw = readFileSync(join(fixturesDirectory, name), 'utf8');
  const events = raw
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { raw, events };
}

/** The final content blocks as the SDK assembles them from the same stream. */
async function sdkContent(raw: string): Promise<unknown[]> {
  const bytes = new TextEncoder().encode(raw);
  const readable = new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  const message = await MessageStream.fromReadableStream(readable).finalMessage();
  // Keep the fields a request replays; drop extras such as `caller` or `citations: null`.
  return message.content.map((block) => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'thinking':
        return { type: 'thinking', thinking: block.thinking, signature: block.signature };
      case 'redacted_thinking':
        return { type: 'redacted_thinking', data: block.data };
      case 'tool_use':
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      default:
        return block;
    }
  });
}

/** Folds a sealed chunk body back into the content block the API sent. */
function blockOf(body: StreamChunkBody): unknown {
  switch (body.type) {
    case 'text':
      return { type: 'text', text: body.data.text };
    case 'thinking':
      return 'redacted' in body.data
        ? { type: 'redacted_thinking', data: body.data.redacted }
        : { type: 'thinking', thinking: body.data.text, signature: body.data.signature };
    case 'tool_call':
      return {
        type: 'tool_use',
        id: body.data.callId,
        name: body.data.name,
        input: body.data.arguments,
      };
  }
}

/** Checks the lifecycle contract and answers the sealed bodies in order. */
function checkLifecycle(operations: StreamOperation[]): StreamChunkBody[] {
  const sealed: StreamChunkBody[] = [];
  const streamed = new Map<number, string>();
  let openIndex: number | null = null;
  for (const operation of operations) {
    switch (operation.kind) {
      case 'open':
        expect(openIndex).toBeNull();
        expect(streamed.has(operation.index)).toBe(false);
        openIndex = operation.index;
        streamed.set(operation.index, '');
        break;
      case 'delta': {
        expect(operation.index).toBe(openIndex);
        const sofar = streamed.get(operation.index) ?? '';
        expect(operation.offset).toBe(sofar.length);
        expect(operation.text.length).toBeGreaterThan(0);
        streamed.set(operation.index, sofar + operation.text);
        break;
      }
      case 'seal': {
        if (openIndex !== null) {
          expect(operation.index).toBe(openIndex);
          const body = operation.body;
          expect(body.type === 'text' || body.type === 'thinking').toBe(true);
          if (body.type === 'text' || (body.type === 'thinking' && 'text' in body.data)) {
            expect((body.data as { text: string }).text).toBe(streamed.get(operation.index));
          }
        } else {
          // Sealed at once: tool calls, redacted thinking, thinking with only a signature.
          expect(streamed.has(operation.index)).toBe(false);
        }
        openIndex = null;
        sealed.push(operation.body);
        break;
      }
    }
  }
  expect(openIndex).toBeNull();
  return sealed;
}

describe('reduceStream over the recorded streams', () => {
  it.each(fixtureNames)(
    '%s reduces to chunks that fold back to the blocks the API sent',
    async (name) => {
      const { raw, events } = readFixture(name);
      const { state, operations } = reduceStream(events);
      const sealed = checkLifecycle(operations);
      const sent = await sdkContent(raw);
      expect(sealed.map(blockOf)).toEqual(sent);
      // The wire builder folds the sealed chunks back into the same assistant message.
      const log = new ChunkLogWriter();
      log.startTurn();
      log.userText('question');
      for (const body of sealed) log.write(body);
      expect(buildMessages(log.chunks)[1]).toEqual({ role: 'assistant', content: sent });
      expect(state.finished).toBe(true);
      expect(state.error).toBeNull();
      expect(state.open).toBeNull();
      expect(interruptedBlock(state)).toBeNull();

      const start = events.find((event) => event.type === 'message_start') as {
        message: { id: string; usage: { input_tokens: number } };
      };
      const delta = events.find((event) => event.type === 'message_delta') as {
        delta: { stop_reason: string };
        usage: { output_tokens: number; input_tokens: number };
      };
      expect(state.messageId).toBe(start.message.id);
      expect(state.stopReason).toBe(delta.delta.stop_reason);
      expect(state.usage.outputTokens).toBe(delta.usage.output_tokens);
      expect(state.usage.inputTokens).toBe(delta.usage.input_tokens);
    },
  );

  it('keeps the signature that arrives last and the empty final thinking delta changes nothing', () => {
    const { events } = readFixture('thinking-then-text.jsonl');
    const { operations } = reduceStream(events);
    const thinkingSeal = operations.find(
      (operation) => operation.kind === 'seal' && operation.body.type === 'thinking',
    );
    const signature = (
      events.find(
        (event) => (event.delta as { type?: string } | undefined)?.type === 'signature_delta',
      ) as { delta: { signature: string } }
    ).delta.signature;
    expect(thinkingSeal).toMatchObject({ body: { data: { signature } } });
    expect(
      operations.every((operation) => operation.kind !== 'delta' || operation.text !== ''),
    ).toBe(true);
  });

  it('parses an empty partial_json as {} without opening the tool call', () => {
    const { operations } = reduceStream(readFixture('tool-no-args.jsonl').events);
    const kinds = operations.map((operation) => `${operation.kind}:${operation.index}`);
    expect(kinds.filter((kind) => kind.endsWith(':1'))).toEqual(['seal:1']);
    expect(operations.at(-1)).toMatchObject({
      kind: 'seal',
      body: { type: 'tool_call', data: { name: 'updateIssueList', arguments: {} } },
    });
  });

  it('gives the same operations with pings, unknown events and unknown fields anywhere', () => {
    const { events } = readFixture('text-then-tool.jsonl');
    const expected = reduceStream(events).operations;
    const noise = fc.constantFrom<Record<string, unknown>>(
      { type: 'ping' },
      { type: 'future_event', index: 0, payload: { x: 1 } },
      { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } },
      { nonsense: true },
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(events.length), noise), { maxLength: 12 }),
        fc.boolean(),
        (insertions, decorate) => {
          const noisy: unknown[] = events.map((event) =>
            decorate ? { ...event, unknown_field: { nested: [1, 2] } } : event,
          );
          for (const [position, event] of insertions) noisy.splice(position, 0, event);
          expect(reduceStream(noisy).operations).toEqual(expected);
        },
      ),
    );
  });
});

describe('reduceStream on streams that end early', () => {
  const messageStart = {
    type: 'message_start',
    message: { id: 'msg_1', usage: { input_tokens: 7 } },
  };

  it('reports an open text block to be sealed as interrupted after an error event', () => {
    const { state, operations } = reduceStream([
      messageStart,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Half a sen' } },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ]);
    expect(operations.map((operation) => operation.kind)).toEqual(['open', 'delta']);
    expect(state.error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
    expect(state.finished).toBe(false);
    expect(interruptedBlock(state)).toEqual({
      disposition: 'seal',
      index: 0,
      opened: true,
      body: { type: 'text', role: 'assistant', data: { text: 'Half a sen', interrupted: true } },
    });
  });

  it('reports unsigned thinking and partial tool input to be dropped', () => {
    const thinkingCut = reduceStream([
      messageStart,
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } },
    ]);
    expect(interruptedBlock(thinkingCut.state)).toMatchObject({
      disposition: 'drop',
      type: 'thinking',
      opened: true,
    });

    const toolCut = reduceStream([messageStart, toolUseStart('toolu_1'), inputJson('{"q": "ab')]);
    expect(toolCut.operations).toEqual([]);
    expect(interruptedBlock(toolCut.state)).toMatchObject({
      disposition: 'drop',
      type: 'tool_call',
      opened: false,
    });
  });

  it('keeps thinking whose signature arrived before the cut', () => {
    const { state } = reduceStream([
      messageStart,
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'signature_delta', signature: 'sig' },
      },
    ]);
    expect(interruptedBlock(state)).toEqual({
      disposition: 'seal',
      index: 0,
      opened: false,
      body: { type: 'thinking', role: 'assistant', data: { text: '', signature: 'sig' } },
    });
  });

  it('seals every block completed before the cut, whatever the cut point', () => {
    for (const name of fixtureNames) {
      const { events } = readFixture(name);
      const complete = checkLifecycle(reduceStream(events).operations);
      for (let cut = 0; cut <= events.length; cut += 1) {
        const { state, operations } = reduceStream(events.slice(0, cut));
        const sealed = operations.flatMap((operation) =>
          operation.kind === 'seal' ? [operation.body] : [],
        );
        // What was sealed is a prefix of the full stream's chunks.
        expect(complete.slice(0, sealed.length)).toEqual(sealed);
        const leftover = interruptedBlock(state);
        if (leftover?.disposition === 'seal' && leftover.body.type === 'text') {
          const full = complete[sealed.length];
          const fullText = full?.type === 'text' ? full.data.text : undefined;
          expect(fullText?.startsWith(leftover.body.data.text)).toBe(true);
        }
      }
    }
  });
});

describe('reduceStream with redacted thinking', () => {
  it('seals redacted thinking at once with its opaque data', () => {
    const { operations } = reduceStream([
      { type: 'message_start', message: { id: 'msg_2' } },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Done.' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
      { type: 'message_stop' },
    ]);
    expect(checkLifecycle(operations).map(blockOf)).toEqual([
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: 'Done.' },
    ]);
  });

  it('leaves no trace of an empty text block', () => {
    const { operations } = reduceStream([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '' } },
      { type: 'content_block_stop', index: 0 },
    ]);
    expect(operations).toEqual([]);
  });

  it('reports tool input that is not a JSON object', () => {
    const { operations } = reduceStream([
      toolUseStart('toolu_9'),
      inputJson('[1,'),
      { type: 'content_block_stop', index: 0 },
    ]);
    expect(operations).toEqual([
      {
        kind: 'seal',
        index: 0,
        invalidInput: '[1,',
        body: {
          type: 'tool_call',
          role: 'assistant',
          data: { callId: 'toolu_9', name: 'lookup', arguments: {} },
        },
      },
    ]);
  });
});
