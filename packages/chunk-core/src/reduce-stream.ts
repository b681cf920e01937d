/**
 * The stream → chunk reducer: the raw events of one model step become chunk lifecycle
 * operations (docs/architecture.md, "Live events"). Pure: the caller owns ids, persistence and
 * publishing. A block that ends empty is never opened, so a client never sees a chunk that
 * cannot seal.
 */
import { assertNever } from './errors/assert-never';
import type { TextData, ThinkingData, ToolCallData } from './schemas/chunk';
import type { Usage } from './schemas/events';
import { emptyUsage } from './schemas/usage';
import {
  type WireStreamEvent,
  WireStreamEventSchema,
  type WireStreamUsage,
} from './wire/wire-types';

/** The chunk types a model stream produces. */
export type StreamChunkType = 'text' | 'thinking' | 'tool_call';

/** The body of a chunk sealed from a stream (always role `assistant`). */
export type StreamChunkBody =
  | { type: 'text'; role: 'assistant'; data: TextData }
  | { type: 'thinking'; role: 'assistant'; data: ThinkingData }
  | { type: 'tool_call'; role: 'assistant'; data: ToolCallData };

/** One chunk lifecycle operation; `index` is the block's position in the model's response. */
export type StreamOperation =
  | { kind: 'open'; index: number; type: StreamChunkType }
  | { kind: 'delta'; index: number; offset: number; text: string }
  | {
      kind: 'seal';
      index: number;
      body: StreamChunkBody;
      /** Set when a tool call's input was not a JSON object; its arguments are then `{}`. */
      invalidInput?: string;
    };

/** The block being assembled. */
type OpenBlock =
  | { kind: 'text'; index: number; text: string; opened: boolean }
  | { kind: 'thinking'; index: number; text: string; signature: string; opened: boolean }
  | { kind: 'redacted_thinking'; index: number; data: string }
  | {
      kind: 'tool_call';
      index: number;
      callId: string;
      name: string;
      json: string;
      startInput: unknown;
    };

/** Everything the reducer knows about one step's stream so far. */
export type StreamState = {
  messageId: string | null;
  usage: Usage;
  /** The API's `stop_reason` (`end_turn`, `tool_use`, `max_tokens`, ...), once `message_delta` said it. */
  stopReason: string | null;
  /** Set by an `error` event (e.g. `overloaded_error` after HTTP 200); no `message_stop` follows. */
  error: { type: string; message: string } | null;
  /** True once `message_stop` arrived: the stream ended normally. */
  finished: boolean;
  open: OpenBlock | null;
};

/** What to do with the block that was open when a stream ended early (error event or abort). */
export type InterruptedBlock =
  | {
      disposition: 'seal';
      index: number;
      /** Whether an `open` was emitted for it (false for blocks sealed at once). */
      opened: boolean;
      body: StreamChunkBody;
    }
  | {
      disposition: 'drop';
      index: number;
      /** Whether an `open` was emitted for it, i.e. whether clients were told about it. */
      opened: boolean;
      type: StreamChunkType;
      /** Why it cannot be kept (unsigned thinking, partial tool input, empty text). */
      reason: string;
    };

/** The state before the first event of a step. */
export function initialStreamState(): StreamState {
  return {
    messageId: null,
    usage: emptyUsage(),
    stopReason: null,
    error: null,
    finished: false,
    open: null,
  };
}

/** Applies one raw stream event (any JSON; unknown events and fields are ignored). */
export function reduceStreamEvent(
  state: StreamState,
  rawEvent: unknown,
): { state: StreamState; operations: StreamOperation[] } {
  const parsed = WireStreamEventSchema.safeParse(rawEvent);
  if (!parsed.success) return { state, operations: [] };
  return applyEvent(state, parsed.data);
}

/** Applies a whole recorded stream; returns the final state and every operation in order. */
export function reduceStream(events: Iterable<unknown>): {
  state: StreamState;
  operations: StreamOperation[];
} {
  let state = initialStreamState();
  const operations: StreamOperation[] = [];
  for (const event of events) {
    const result = reduceStreamEvent(state, event);
    state = result.state;
    operations.push(...result.operations);
  }
  return { state, operations };
}

function applyEvent(
  state: StreamState,
  event: WireStreamEvent,
): { state: StreamState; operations: StreamOperation[] } {
  switch (event.type) {
    case 'message_start':
      return {
        state: {
          ...state,
          messageId: event.message.id ?? state.messageId,
          usage: mergeUsage(state.usage, event.message.usage),
        },
        operations: [],
      };
    case 'content_block_start': {
      // A start while another block is open means its stop went missing: finish that one first.
      const operations = state.open === null ? [] : stopBlock(state.open);
      const block = event.content_block;
      const index = event.index;
      let open: OpenBlock | null;
      switch (block.type) {
        case 'text':
          open = { kind: 'text', index, text: '', opened: false };
          break;
        case 'thinking':
          open = { kind: 'thinking', index, text: '', signature: block.signature, opened: false };
          break;
        case 'redacted_thinking':
          open = { kind: 'redacted_thinking', index, data: block.data };
          break;
        case 'tool_use':
          open = {
            kind: 'tool_call',
            index,
            callId: block.id,
            name: block.name,
            json: '',
            startInput: block.input,
          };
          break;
        case 'unknown':
          open = null;
          break;
        default:
          return assertNever(block);
      }
      // Some servers put initial text in the start block; treat it as the first delta.
      const initialText =
        block.type === 'text' ? block.text : block.type === 'thinking' ? block.thinking : '';
      if (open !== null && initialText.length > 0) {
        const grown = appendText(open, initialText);
        return {
          state: { ...state, open: grown.block },
          operations: [...operations, ...grown.operations],
        };
      }
      return { state: { ...state, open }, operations };
    }
    case 'content_block_delta': {
      const open = state.open;
      if (open === null || open.index !== event.index) return { state, operations: [] };
      const delta = event.delta;
      switch (delta.type) {
        case 'text_delta':
        case 'thinking_delta': {
          const text = delta.type === 'text_delta' ? delta.text : delta.thinking;
          const expected = delta.type === 'text_delta' ? 'text' : 'thinking';
          if (open.kind !== expected) return { state, operations: [] };
          const grown = appendText(open, text);
          return { state: { ...state, open: grown.block }, operations: grown.operations };
        }
        case 'signature_delta':
          if (open.kind !== 'thinking') return { state, operations: [] };
          return {
            state: { ...state, open: { ...open, signature: open.signature + delta.signature } },
            operations: [],
          };
        case 'input_json_delta':
          if (open.kind !== 'tool_call') return { state, operations: [] };
          return {
            state: { ...state, open: { ...open, json: open.json + delta.partial_json } },
            operations: [],
          };
        case 'unknown':
          return { state, operations: [] };
        default:
          return assertNever(delta);
      }
    }
    case 'content_block_stop': {
      const open = state.open;
      if (open === null || open.index !== event.index) return { state, operations: [] };
      return { state: { ...state, open: null }, operations: stopBlock(open) };
    }
    case 'message_delta':
      return {
        state: {
          ...state,
          stopReason: event.delta.stop_reason ?? state.stopReason,
          usage: mergeUsage(state.usage, event.usage),
        },
        operations: [],
      };
    case 'message_stop':
      return { state: { ...state, finished: true }, operations: [] };
    case 'error':
      return {
        state: {
          ...state,
          error: { type: event.error.type, message: event.error.message ?? event.error.type },
        },
        operations: [],
      };
    case 'ping':
    case 'unknown':
      return { state, operations: [] };
    default:
      return assertNever(event);
  }
}

/** Grows a text or thinking block; opens it on its first non-empty text. */
function appendText(
  block: OpenBlock,
  text: string,
): { block: OpenBlock; operations: StreamOperation[] } {
  if (text.length === 0 || (block.kind !== 'text' && block.kind !== 'thinking')) {
    return { block, operations: [] };
  }
  const operations: StreamOperation[] = [];
  if (!block.opened) operations.push({ kind: 'open', index: block.index, type: block.kind });
  operations.push({ kind: 'delta', index: block.index, offset: block.text.length, text });
  return { block: { ...block, text: block.text + text, opened: true }, operations };
}

/** The operations that finish a block at its `content_block_stop`. */
function stopBlock(block: OpenBlock): StreamOperation[] {
  switch (block.kind) {
    case 'text':
      // An empty text block was never opened; the API rejects empty text, so it leaves no trace.
      if (block.text.length === 0) return [];
      return [
        {
          kind: 'seal',
          index: block.index,
          body: { type: 'text', role: 'assistant', data: { text: block.text } },
        },
      ];
    case 'thinking':
      // Neither shown nor replayable: nothing to keep.
      if (!block.opened && block.signature.length === 0) return [];
      return [
        {
          kind: 'seal',
          index: block.index,
          body: thinkingBody(block.text, block.signature),
        },
      ];
    case 'redacted_thinking':
      return [
        {
          kind: 'seal',
          index: block.index,
          body: { type: 'thinking', role: 'assistant', data: { redacted: block.data } },
        },
      ];
    case 'tool_call': {
      const input = parseToolInput(block.json, block.startInput);
      const operation: StreamOperation = {
        kind: 'seal',
        index: block.index,
        body: {
          type: 'tool_call',
          role: 'assistant',
          data: { callId: block.callId, name: block.name, arguments: input.arguments },
        },
      };
      if (input.invalid !== undefined) operation.invalidInput = input.invalid;
      return [operation];
    }
    default:
      return assertNever(block);
  }
}

function thinkingBody(text: string, signature: string): StreamChunkBody {
  // Thinking without a signature can never be replayed; the chunk still records what was shown.
  const data: ThinkingData = signature.length > 0 ? { text, signature } : { text };
  return { type: 'thinking', role: 'assistant', data };
}

/** Parses the concatenated `partial_json`; an empty buffer means `{}` (or the start block's input). */
function parseToolInput(
  json: string,
  startInput: unknown,
): { arguments: Record<string, unknown>; invalid?: string } {
  if (json.trim().length === 0) {
    return { arguments: isPlainObject(startInput) ? startInput : {} };
  }
  try {
    const value: unknown = JSON.parse(json);
    if (isPlainObject(value)) return { arguments: value };
  } catch {
    // Falls through: the caller learns of it through `invalidInput`.
  }
  return { arguments: {}, invalid: json };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The block left open when a stream ended before its stop (error event or abort), and what the
 * caller should do with it: an assistant text is sealed as `interrupted: true`; signed thinking
 * and redacted thinking are complete and sealed; unsigned thinking, partial tool input and empty
 * text are dropped. Null when no block was open.
 */
export function interruptedBlock(state: StreamState): InterruptedBlock | null {
  const block = state.open;
  if (block === null) return null;
  switch (block.kind) {
    case 'text':
      if (block.text.trim().length === 0) {
        return {
          disposition: 'drop',
          index: block.index,
          opened: block.opened,
          type: 'text',
          reason: 'empty text',
        };
      }
      return {
        disposition: 'seal',
        index: block.index,
        opened: block.opened,
        body: { type: 'text', role: 'assistant', data: { text: block.text, interrupted: true } },
      };
    case 'thinking':
      // The signature arrives after the last thinking delta, so a signed block is complete.
      if (block.signature.length > 0) {
        return {
          disposition: 'seal',
          index: block.index,
          opened: block.opened,
          body: thinkingBody(block.text, block.signature),
        };
      }
      return {
        disposition: 'drop',
        index: block.index,
        opened: block.opened,
        type: 'thinking',
        reason: 'thinking cut off before its signature cannot be replayed',
      };
    case 'redacted_thinking':
      return {
        disposition: 'seal',
        index: block.index,
        opened: false,
        body: { type: 'thinking', role: 'assistant', data: { redacted: block.data } },
      };
    case 'tool_call':
      return {
        disposition: 'drop',
        index: block.index,
        opened: false,
        type: 'tool_call',
        reason: 'tool call cut off before its input was complete',
      };
    default:
      return assertNever(block);
  }
}

/** The step's token usage in chunklog's shape, from the API's cumulative counters. */
function mergeUsage(usage: Usage, reported: WireStreamUsage | undefined): Usage {
  if (reported === undefined) return usage;
  return {
    inputTokens: reported.input_tokens ?? usage.inputTokens,
    outputTokens: reported.output_tokens ?? usage.outputTokens,
    cacheReadInputTokens: reported.cache_read_input_tokens ?? usage.cacheReadInputTokens,
    cacheCreationInputTokens:
      reported.cache_creation_input_tokens ?? usage.cacheCreationInputTokens,
  };
}
