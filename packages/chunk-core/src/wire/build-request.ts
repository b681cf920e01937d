/**
 * The full Messages request for a tab's next step, with prompt-cache breakpoints on the last
 * tool, the system prompt and the last two user messages: the previous request wrote the cache
 * at the older one, so each request reads the whole earlier prefix. Markers go on copies of the
 * blocks, as their last key, so stripping `cache_control` gives back the messages byte for byte.
 */
import { InvalidInputError } from '../errors/errors';
import { buildMessages, type FoldableChunk, isCompactionMessage } from './message-fold';
import type {
  WireCacheControl,
  WireContentBlock,
  WireMessage,
  WireRequest,
  WireTextBlock,
  WireTool,
  WireToolResultBlock,
  WireToolUseBlock,
} from './wire-types';

/** Everything a request needs besides the log. */
export type RequestOptions = {
  model: string;
  maxTokens: number;
  system?: string;
  tools?: readonly WireTool[];
  /** Extended thinking; `budgetTokens` must be at least 1024 and below `maxTokens`. */
  thinking?: { budgetTokens: number };
  /** The most UTF-8 bytes one chunk may take on the wire; larger ones are cut with a note. */
  maxChunkBytes?: number;
};

/** Pattern every tool name must match (the Messages API's rule). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** The marker chunklog puts on each breakpoint. */
export const CACHE_BREAKPOINT: WireCacheControl = { type: 'ephemeral' };

/** Builds the next step's request from a whole log (chunks in seq order). */
export function buildRequest(
  options: RequestOptions & { chunks: Iterable<FoldableChunk> },
): WireRequest {
  const foldOptions =
    options.maxChunkBytes === undefined ? {} : { maxChunkBytes: options.maxChunkBytes };
  return assembleRequest(buildMessages(options.chunks, foldOptions), options);
}

/**
 * Builds a request around already folded messages. Throws `InvalidInputError` for options the
 * API would reject whatever the log. Thinking is left off a request whose last assistant
 * message does not start with a thinking block (switched on mid-turn, or cut): the API would
 * reject it.
 */
export function assembleRequest(
  messages: readonly WireMessage[],
  options: RequestOptions,
): WireRequest {
  checkOptions(options);
  const request: Omit<WireRequest, 'messages'> = {
    model: options.model,
    max_tokens: options.maxTokens,
  };
  if (options.system !== undefined && options.system.trim().length > 0) {
    request.system = [{ type: 'text', text: options.system, cache_control: CACHE_BREAKPOINT }];
  }
  const tools = options.tools ?? [];
  const lastTool = tools.at(-1);
  if (lastTool !== undefined) {
    request.tools = [
      ...tools.slice(0, -1),
      { ...withoutCacheControl(lastTool), cache_control: CACHE_BREAKPOINT },
    ];
  }
  if (options.thinking !== undefined && finalAssistantStartsWithThinking(messages)) {
    request.thinking = { type: 'enabled', budget_tokens: options.thinking.budgetTokens };
  }
  return { ...request, messages: markRollingBreakpoints(messages) };
}

function checkOptions(options: RequestOptions): void {
  if (options.model.length === 0) throw new InvalidInputError('model must not be empty');
  if (!Number.isInteger(options.maxTokens) || options.maxTokens < 1) {
    throw new InvalidInputError(`maxTokens must be a positive integer, got ${options.maxTokens}`);
  }
  const thinking = options.thinking;
  if (thinking !== undefined) {
    if (!Number.isInteger(thinking.budgetTokens) || thinking.budgetTokens < 1024) {
      throw new InvalidInputError('thinking.budgetTokens must be an integer of at least 1024');
    }
    if (thinking.budgetTokens >= options.maxTokens) {
      throw new InvalidInputError('maxTokens must be greater than thinking.budgetTokens');
    }
  }
  const names = new Set<string>();
  for (const tool of options.tools ?? []) {
    if (!TOOL_NAME_PATTERN.test(tool.name)) {
      throw new InvalidInputError(
        `tool name ${JSON.stringify(tool.name)} must match ${TOOL_NAME_PATTERN}`,
      );
    }
    if (names.has(tool.name))
      throw new InvalidInputError(`tool name ${tool.name} is offered twice`);
    names.add(tool.name);
  }
}

/** Copies the messages with a breakpoint on the last block of the last two user messages. */
function markRollingBreakpoints(messages: readonly WireMessage[]): WireMessage[] {
  const marked = [...messages];
  let remaining = 2;
  for (let index = marked.length - 1; index >= 0 && remaining > 0; index -= 1) {
    const message = marked[index];
    if (message === undefined || message.role !== 'user') continue;
    const last = message.content.at(-1);
    if (last === undefined || !acceptsCacheControl(last)) continue;
    marked[index] = {
      role: message.role,
      content: [...message.content.slice(0, -1), { ...last, cache_control: CACHE_BREAKPOINT }],
    };
    remaining -= 1;
  }
  return marked;
}

function acceptsCacheControl(
  block: WireContentBlock,
): block is WireTextBlock | WireToolUseBlock | WireToolResultBlock {
  return block.type === 'text' || block.type === 'tool_use' || block.type === 'tool_result';
}

/**
 * Whether the API's thinking rule holds: the assistant messages answered by the final tool
 * results, or forming a final prefill, start with a thinking block. Consecutive assistant
 * messages count as one, as the API merges them.
 */
function finalAssistantStartsWithThinking(messages: readonly WireMessage[]): boolean {
  const last = messages.at(-1);
  if (last === undefined) return true;
  let end = messages.length - 1;
  if (last.role === 'user') {
    if (!last.content.some((block) => block.type === 'tool_result')) return true;
    end -= 1;
  }
  let start = end;
  // The compaction message opens the conversation but is no part of the turn after it.
  while (
    start > 0 &&
    messages[start - 1]?.role === 'assistant' &&
    !isCompactionMessage(messages[start - 1])
  ) {
    start -= 1;
  }
  const first = messages[start];
  if (first === undefined || first.role !== 'assistant' || isCompactionMessage(first)) return true;
  const type = first.content[0]?.type;
  return type === 'thinking' || type === 'redacted_thinking';
}

function withoutCacheControl(tool: WireTool): WireTool {
  const { cache_control: _ignored, ...rest } = tool;
  return rest;
}

/** A deep copy of `value` without any `cache_control` key: what a request is, breakpoints aside. */
export function stripCacheControl<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value, (key, inner: unknown) => (key === 'cache_control' ? undefined : inner)),
  ) as T;
}
