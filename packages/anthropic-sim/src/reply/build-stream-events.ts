import { assertNever } from '@chunklog/chunk-core';
import { estimateTokens } from '../prompt-cache/estimate-tokens';
import type { ApiErrorType } from './api-error-type';
import type { AssistantMessage, ReplyBlock } from './assistant-message';

/** One server-sent event: `event: <name>` then `data: <json>`; the name equals `data.type`. */
export interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
  /** Output tokens this event carries, for pacing at a token rate. */
  tokens: number;
}

export interface StreamEventOptions {
  requestId: string;
  /** Replace the rest of the stream by an `error` event after this many deltas. */
  streamError?: { errorType: ApiErrorType; afterDeltas: number };
}

const streamErrorMessages: Partial<Record<ApiErrorType, string>> = {
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
  rate_limit_error: 'Rate limited',
};

/**
 * The SSE events of a finished message in the order the real API sends them (see
 * test/fixtures/anthropic-streams): message_start with the input usage and output_tokens 1;
 * per block a start with the empty shape, deltas, and a stop, with a ping after the first
 * block's start; thinking ends with its signature_delta; tool input arrives as an empty
 * input_json_delta followed by fragments; a compaction block's content arrives in one
 * compaction_delta; then message_delta (stop reason, cumulative usage) and message_stop.
 */
export function buildStreamEvents(
  message: AssistantMessage,
  options: StreamEventOptions,
): StreamEvent[] {
  const events: StreamEvent[] = [];
  const emit = (data: Record<string, unknown>, tokens = 0) => {
    events.push({ event: String(data.type), data, tokens });
  };
  let deltas = 0;
  let failed = false;
  const emitDelta = (index: number, delta: Record<string, unknown>, tokens: number) => {
    if (failed) return;
    if (options.streamError && deltas >= options.streamError.afterDeltas) {
      failed = true;
      const errorType = options.streamError.errorType;
      emit({
        type: 'error',
        error: { type: errorType, message: streamErrorMessages[errorType] ?? errorType },
        request_id: options.requestId,
      });
      return;
    }
    deltas += 1;
    emit({ type: 'content_block_delta', index, delta }, tokens);
  };

  emit({
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      usage: { ...message.usage, output_tokens: 1 },
    },
  });
  message.content.forEach((block, index) => {
    if (failed) return;
    emit({ type: 'content_block_start', index, content_block: emptyShape(block) });
    if (index === 0) emit({ type: 'ping' });
    switch (block.type) {
      case 'text':
        for (const piece of splitText(block.text)) {
          emitDelta(index, { type: 'text_delta', text: piece }, estimateTokens(piece));
        }
        break;
      case 'thinking':
        for (const piece of splitText(block.thinking)) {
          emitDelta(index, { type: 'thinking_delta', thinking: piece }, estimateTokens(piece));
        }
        emitDelta(index, { type: 'signature_delta', signature: block.signature }, 0);
        break;
      case 'tool_use': {
        const json = Object.keys(block.input).length === 0 ? '' : JSON.stringify(block.input);
        emitDelta(index, { type: 'input_json_delta', partial_json: '' }, 0);
        for (const piece of splitJson(json)) {
          emitDelta(
            index,
            { type: 'input_json_delta', partial_json: piece },
            estimateTokens(piece),
          );
        }
        break;
      }
      case 'compaction':
        // One delta with the block's final content, after a null-content start.
        emitDelta(
          index,
          {
            type: 'compaction_delta',
            content: block.content,
            encrypted_content: block.encrypted_content,
          },
          estimateTokens(block.content),
        );
        break;
      default:
        assertNever(block);
    }
    if (!failed) emit({ type: 'content_block_stop', index });
  });
  if (failed) return events;
  if (options.streamError) {
    // An error asked for after more deltas than the message has still cuts the stream short.
    emit({
      type: 'error',
      error: {
        type: options.streamError.errorType,
        message: streamErrorMessages[options.streamError.errorType] ?? 'error',
      },
      request_id: options.requestId,
    });
    return events;
  }
  emit({
    type: 'message_delta',
    delta: {
      stop_reason: message.stop_reason,
      stop_sequence: message.stop_sequence,
      stop_details: null,
    },
    usage: {
      input_tokens: message.usage.input_tokens,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
      cache_read_input_tokens: message.usage.cache_read_input_tokens,
      output_tokens: message.usage.output_tokens,
    },
  });
  emit({ type: 'message_stop' });
  return events;
}

function emptyShape(block: ReplyBlock): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: '' };
    case 'thinking':
      return { type: 'thinking', thinking: '', signature: '' };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: {}, caller: block.caller };
    case 'compaction':
      // The signature and tool changes have no delta of their own: they come with the start.
      return {
        type: 'compaction',
        content: null,
        encrypted_content: null,
        signature: block.signature,
        tool_changes: block.tool_changes,
      };
    default:
      return assertNever(block);
  }
}

/** Pieces of about three words each, whitespace kept, so the pieces concatenate to the text. */
export function splitText(text: string): string[] {
  const words = text.match(/\s*\S+/g) ?? [];
  const pieces: string[] = [];
  for (let index = 0; index < words.length; index += 3) {
    pieces.push(words.slice(index, index + 3).join(''));
  }
  const trailing = text.match(/\s+$/)?.[0];
  if (trailing) pieces.push(trailing);
  return pieces.length > 0 ? pieces : [text];
}

function splitJson(json: string): string[] {
  const pieces: string[] = [];
  for (let index = 0; index < json.length; index += 24) pieces.push(json.slice(index, index + 24));
  return pieces;
}
