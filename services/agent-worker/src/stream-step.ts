import type Anthropic from '@anthropic-ai/sdk';
import { emptyUsage, type ToolCallData, type Usage } from '@chunklog/chunk-core';
import type { ChunkToAppend, TabSession } from './tab-session';

/** How one model call (one attempt at a step) ended. */
export type StreamStepResult =
  | { outcome: 'finished'; stopReason: string | null; usage: Usage; toolCalls: ToolCallData[] }
  /** Failed (HTTP error or mid-stream `error` event); what sealed before the failure stays. */
  | { outcome: 'failed'; error: unknown; usage: Usage; toolCalls: ToolCallData[] }
  /** Aborted by cancel or lease loss; the partial text was sealed with interrupted: true. */
  | { outcome: 'aborted'; usage: Usage; toolCalls: ToolCallData[] };

type BlockState =
  | { kind: 'text'; id: string; text: string }
  | { kind: 'thinking'; id: string; text: string; signature: string }
  | { kind: 'tool_use'; callId: string; name: string; json: string }
  | { kind: 'skipped' };

function usageFrom(
  usage: Partial<Record<keyof Anthropic.MessageDeltaUsage, unknown>> | undefined,
  into: Usage,
): Usage {
  const read = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
  return {
    inputTokens: read(usage?.input_tokens, into.inputTokens),
    // output_tokens in message_delta is cumulative for the message, so it replaces.
    outputTokens: read(usage?.output_tokens, into.outputTokens),
    cacheReadInputTokens: read(usage?.cache_read_input_tokens, into.cacheReadInputTokens),
    cacheCreationInputTokens: read(
      usage?.cache_creation_input_tokens,
      into.cacheCreationInputTokens,
    ),
  };
}

function parseArguments(json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    // Cut-off JSON (max_tokens mid tool_use): keep the raw text so the tool can say what is wrong.
    return { invalidJson: json };
  }
}

/**
 * Streams one model call and turns it into chunks: text and thinking blocks open, stream
 * deltas (published with their offsets) and seal at content_block_stop; tool_use blocks
 * seal at once when complete. Each seal is appended (fenced) before the next event is read,
 * so the log order is the stream order.
 */
export async function streamStep(input: {
  anthropic: Anthropic;
  /** The request body without `stream` (built by chunk-core from the log). */
  request: Anthropic.MessageCreateParamsNonStreaming;
  signal: AbortSignal;
  session: TabSession;
  turnId: string;
  step: number;
  newId: () => string;
}): Promise<StreamStepResult> {
  const { anthropic, request, signal, session, turnId, step, newId } = input;
  const blocks = new Map<number, BlockState>();
  const toolCalls: ToolCallData[] = [];
  let usage = emptyUsage();
  let stopReason: string | null = null;

  const seal = async (body: ChunkToAppend) => {
    await session.append([body]);
  };

  const openBlock = async (id: string, type: 'text' | 'thinking') => {
    session.open = { id, turnId, step, role: 'assistant', type, text: '' };
    await session.publish({
      event: 'chunk-open',
      data: { tabId: session.tabId, id, turnId, step, role: 'assistant', type },
    });
  };

  const delta = async (id: string, text: string) => {
    const open = session.open;
    if (!open || open.id !== id || text === '') return;
    const offset = open.text.length;
    open.text += text;
    await session.publish({
      event: 'chunk-delta',
      data: { tabId: session.tabId, id, offset, text },
    });
  };

  /** Seals what the user already saw of a cut-off text block; drops cut-off thinking and tool input. */
  const sealPartial = async () => {
    const open = session.open;
    session.open = null;
    if (open?.type !== 'text' || open.text.trim() === '' || session.lost) return;
    await seal({
      id: open.id,
      turnId,
      step,
      role: 'assistant',
      type: 'text',
      data: { text: open.text, interrupted: true },
    });
  };

  try {
    const stream = await anthropic.messages.create({ ...request, stream: true }, { signal });
    for await (const event of stream) {
      switch (event.type) {
        case 'message_start':
          usage = usageFrom(event.message.usage, usage);
          break;
        case 'message_delta':
          usage = usageFrom(event.usage, usage);
          stopReason = event.delta.stop_reason ?? stopReason;
          break;
        case 'message_stop':
          break;
        case 'content_block_start': {
          const block = event.content_block;
          if (block.type === 'text') {
            const id = newId();
            blocks.set(event.index, { kind: 'text', id, text: '' });
            await openBlock(id, 'text');
            if (block.text) await delta(id, block.text);
          } else if (block.type === 'thinking') {
            const id = newId();
            blocks.set(event.index, { kind: 'thinking', id, text: '', signature: '' });
            await openBlock(id, 'thinking');
          } else if (block.type === 'redacted_thinking') {
            blocks.set(event.index, { kind: 'skipped' });
            await seal({
              id: newId(),
              turnId,
              step,
              role: 'assistant',
              type: 'thinking',
              data: { redacted: block.data },
            });
          } else if (block.type === 'tool_use') {
            blocks.set(event.index, {
              kind: 'tool_use',
              callId: block.id,
              name: block.name,
              json: '',
            });
          } else {
            blocks.set(event.index, { kind: 'skipped' });
          }
          break;
        }
        case 'content_block_delta': {
          const block = blocks.get(event.index);
          const change = event.delta;
          if (!block) break;
          if (change.type === 'text_delta' && block.kind === 'text') {
            block.text += change.text;
            await delta(block.id, change.text);
          } else if (change.type === 'thinking_delta' && block.kind === 'thinking') {
            block.text += change.thinking;
            await delta(block.id, change.thinking);
          } else if (change.type === 'signature_delta' && block.kind === 'thinking') {
            block.signature += change.signature;
          } else if (change.type === 'input_json_delta' && block.kind === 'tool_use') {
            block.json += change.partial_json;
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks.get(event.index);
          blocks.delete(event.index);
          if (!block || block.kind === 'skipped') break;
          if (block.kind === 'tool_use') {
            const call: ToolCallData = {
              callId: block.callId,
              name: block.name,
              arguments: parseArguments(block.json),
            };
            await seal({
              id: newId(),
              turnId,
              step,
              role: 'assistant',
              type: 'tool_call',
              data: call,
            });
            toolCalls.push(call);
            break;
          }
          session.open = null;
          if (block.kind === 'text') {
            // An empty text block is invalid in a request; it is not worth a chunk either.
            if (block.text !== '') {
              await seal({
                id: block.id,
                turnId,
                step,
                role: 'assistant',
                type: 'text',
                data: { text: block.text },
              });
            }
          } else {
            await seal({
              id: block.id,
              turnId,
              step,
              role: 'assistant',
              type: 'thinking',
              data: block.signature
                ? { text: block.text, signature: block.signature }
                : { text: block.text },
            });
          }
          break;
        }
        default: {
          const unexpected: never = event;
          void unexpected;
        }
      }
    }
    session.open = null;
    return { outcome: 'finished', stopReason, usage, toolCalls };
  } catch (error) {
    try {
      await sealPartial();
    } catch {
      // The step already failed; the original error is the one worth reporting.
    }
    if (signal.aborted) return { outcome: 'aborted', usage, toolCalls };
    return { outcome: 'failed', error, usage, toolCalls };
  }
}
