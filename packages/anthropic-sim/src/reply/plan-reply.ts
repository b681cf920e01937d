import { createHash } from 'node:crypto';
import { assertNever } from '@chunklog/chunk-core';
import { canonicalJson } from '../prompt-cache/canonical-json';
import { estimateTokens } from '../prompt-cache/estimate-tokens';
import type {
  ContentBlockParam,
  MessageParam,
  MessagesRequest,
  Tool,
} from '../request/messages-request';
import type { CompactionSigner } from '../signing/compaction-signer';
import type { ThinkingSigner } from '../signing/thinking-signer';
import { type ApiErrorType, errorTypeForStatus } from './api-error-type';
import type { ReplyBlock } from './assistant-message';
import { type Directive, parseDirectives, type StopReason } from './parse-directives';

/** What the simulator will answer to one valid request. */
export type ReplyPlan =
  | {
      kind: 'error';
      status: number;
      errorType: ApiErrorType;
      message: string;
      retryAfterSeconds?: number;
      /** `error.details.error_code`, for the errors that have one. */
      errorCode?: string;
      delayMilliseconds: number;
    }
  | {
      kind: 'message';
      id: string;
      content: ReplyBlock[];
      stopReason: StopReason;
      stopSequence: string | null;
      outputTokens: number;
      delayMilliseconds: number;
      tokensPerSecond?: number;
      streamError?: { errorType: ApiErrorType; afterDeltas: number };
    }
  | { kind: 'invalid'; message: string };

export interface PlanReplyContext {
  signer: ThinkingSigner;
  compactionSigner: CompactionSigner;
  /** The request's input tokens, as `usage` reports them (cache reads and writes included). */
  inputTokens: number;
  /** The model's context window, unless a `context-window` directive sets another. */
  contextWindowTokens: number;
  /**
   * How many times each injected failure has fired, keyed by conversation, step and directive,
   * so `times=N` fails the first N attempts (the SDK's retries included) and then lets one
   * through. Mutated by `planReply`.
   */
  failureCounts: Map<string, number>;
}

const errorMessages: Record<ApiErrorType, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

/**
 * Decides the reply from the conversation. Directives come from the latest user message that
 * holds text (the turn's anchor); the step is the number of tool-result messages after it. At
 * step 0 the directives shape the answer; when the last message brings tool results the reply
 * either calls tools again (`steps N`) or answers with those results.
 */
export function planReply(request: MessagesRequest, context: PlanReplyContext): ReplyPlan {
  const messages = request.messages;
  const anchorIndex = findAnchor(messages);
  const anchor = anchorIndex === -1 ? undefined : messages[anchorIndex];
  const parsed = parseDirectives(anchor ? textOf(anchor) : '');
  if (!parsed.ok) return { kind: 'invalid', message: `sim directive ${parsed.message}` };
  const directives = parsed.directives;
  // Every user message after the anchor holds only tool results: each one closes a step. (An
  // assistant prefill after the anchor does not.)
  const step =
    anchorIndex === -1
      ? 0
      : messages.slice(anchorIndex + 1).filter((message) => message.role === 'user').length;
  const conversationKey = hashText(canonicalJson(messages.slice(0, anchorIndex + 1)));
  const delayMilliseconds = sum(directives, 'delay', (directive) => directive.milliseconds);
  const contextWindow = findContextWindow(messages) ?? context.contextWindowTokens;

  // The API summarizes a conversation of any length, the one that outgrew the window included:
  // compaction is how a client gets out of "prompt is too long".
  if (request.compaction) {
    const unavailable = directives.find(
      (directive): directive is Extract<Directive, { kind: 'compaction-unavailable' }> =>
        directive.kind === 'compaction-unavailable' &&
        consumeFailure(
          context,
          `${conversationKey}|compaction|${directive.source}`,
          directive.times,
        ),
    );
    if (unavailable) {
      return {
        kind: 'error',
        status: 529,
        errorType: 'overloaded_error',
        errorCode: 'compaction_unavailable',
        message:
          'The compaction could not be completed for a transient server reason. Retry the request.',
        delayMilliseconds,
      };
    }
    return planCompaction(request, parsed.text, context, delayMilliseconds);
  }
  if (context.inputTokens > contextWindow) {
    return {
      kind: 'invalid',
      message: `prompt is too long: ${context.inputTokens} tokens > ${contextWindow} maximum`,
    };
  }

  for (const directive of directives) {
    if (directive.kind !== 'error' || directive.step !== step) continue;
    if (!consumeFailure(context, `${conversationKey}|${step}|${directive.source}`, directive.times))
      continue;
    const errorType = errorTypeForStatus(directive.status);
    return {
      kind: 'error',
      status: directive.status,
      errorType,
      message: errorMessages[errorType],
      delayMilliseconds,
      ...(directive.retryAfterSeconds === undefined
        ? {}
        : { retryAfterSeconds: directive.retryAfterSeconds }),
    };
  }

  const seed = hashText(canonicalJson({ ...request, stream: undefined }));
  const lastMessage = messages.at(-1);
  const toolResults =
    lastMessage?.role === 'user' ? blocksOf(lastMessage).filter(isToolResult) : [];
  const userText = parsed.text;
  const offeredTools = request.tool_choice?.type === 'none' ? [] : (request.tools ?? []);
  const stepsWanted = last(directives, 'steps')?.count ?? 1;

  const toolCalls = chooseToolCalls();
  const blocks: ReplyBlock[] = [];
  if (request.thinking && request.thinking.type !== 'disabled') {
    const thinking =
      last(directives, 'think')?.text ??
      (toolResults.length > 0
        ? `I have ${toolResults.length} tool result(s) to work with.`
        : `The user wrote: "${excerpt(userText, 60)}". I will answer briefly.`);
    blocks.push({ type: 'thinking', thinking, signature: context.signer.sign(thinking) });
  }
  if (toolCalls.length > 0) {
    toolCalls.forEach((call, index) => {
      blocks.push({
        type: 'tool_use',
        id: `toolu_${seed.slice(0, 20)}${index.toString().padStart(2, '0')}`,
        name: call.name,
        input: call.input,
        caller: { type: 'direct' },
      });
    });
  } else {
    blocks.push({ type: 'text', text: answerText() });
  }

  const stopDirective = last(directives, 'stop')?.reason;
  let stopReason: StopReason =
    toolCalls.length > 0 ? 'tool_use' : (stopDirective ?? ('end_turn' as StopReason));
  // The reply can only grow until the context window is full: then it stops there.
  const room = contextWindow - context.inputTokens;
  const limited = applyMaxTokens(blocks, Math.min(request.max_tokens, room));
  if (limited.truncated) {
    stopReason = room < request.max_tokens ? 'model_context_window_exceeded' : 'max_tokens';
  }

  const streamError = directives.find(
    (directive): directive is Extract<Directive, { kind: 'stream-error' }> =>
      directive.kind === 'stream-error' &&
      directive.step === step &&
      consumeFailure(context, `${conversationKey}|${step}|${directive.source}`, directive.times),
  );
  const rate = last(directives, 'rate')?.tokensPerSecond;
  return {
    kind: 'message',
    id: `msg_${seed.slice(20, 44)}`,
    content: limited.blocks,
    stopReason,
    stopSequence: stopReason === 'stop_sequence' ? (request.stop_sequences?.[0] ?? null) : null,
    outputTokens: limited.outputTokens,
    delayMilliseconds,
    ...(rate === undefined ? {} : { tokensPerSecond: rate }),
    ...(streamError
      ? {
          streamError: { errorType: streamError.errorType, afterDeltas: streamError.afterDeltas },
        }
      : {}),
  };

  function chooseToolCalls(): { name: string; input: Record<string, unknown> }[] {
    const choice = request.tool_choice;
    const calls = chooseUnforcedToolCalls();
    // tool_choice `any` / `tool` obliges the model to call a tool at every step, as the API does.
    const forced =
      choice?.type === 'tool'
        ? offeredTools.find((tool) => tool.name === choice.name)
        : choice?.type === 'any'
          ? offeredTools[0]
          : undefined;
    if (calls.length === 0 && forced) {
      calls.push({ name: forced.name, input: sampleInput(forced, userText) });
    }
    const single =
      choice && 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use;
    return single ? calls.slice(0, 1) : calls;
  }

  function chooseUnforcedToolCalls(): { name: string; input: Record<string, unknown> }[] {
    const scripted = directives.flatMap((directive) =>
      directive.kind === 'tool' ? [{ name: directive.name, input: directive.input }] : [],
    );
    if (step === 0) {
      if (scripted.length > 0) return scripted;
      if (directives.some((directive) => directive.kind === 'text' || directive.kind === 'words'))
        return [];
      const mentioned = offeredTools.find((tool) =>
        new RegExp(`\\b${escapeRegExp(tool.name)}\\b`, 'i').test(userText),
      );
      // `steps N` asks for a tool-using turn even when the text names no tool.
      const chosen = mentioned ?? (last(directives, 'steps') ? offeredTools[0] : undefined);
      return chosen ? [{ name: chosen.name, input: sampleInput(chosen, userText) }] : [];
    }
    if (toolResults.length === 0 || step >= stepsWanted) return [];
    if (scripted.length > 0) return scripted;
    const previous = messages.findLast((message) => message.role === 'assistant');
    const repeated = (previous ? blocksOf(previous) : []).flatMap((block) =>
      block.type === 'tool_use' ? [{ name: block.name, input: block.input }] : [],
    );
    if (repeated.length > 0) return repeated;
    const fallback = offeredTools[0];
    return fallback ? [{ name: fallback.name, input: sampleInput(fallback, userText) }] : [];
  }

  function answerText(): string {
    const literal = last(directives, 'text')?.text;
    if (literal !== undefined) return literal;
    const words = last(directives, 'words')?.count;
    if (words !== undefined) return generateWords(words, seed);
    if (toolResults.length > 0) {
      return toolResults
        .map((result) => {
          const name = findToolName(messages, result.tool_use_id) ?? 'tool';
          const verb = result.is_error ? 'failed with' : 'returned';
          return `The ${name} tool ${verb}: ${excerpt(resultText(result), 200)}.`;
        })
        .join(' ');
    }
    if (userText.length === 0) return 'Hello! How can I help you today?';
    return `You said: "${excerpt(userText, 80)}". This is a short answer from the simulator.`;
  }
}

/** The compaction request's answer: one signed block summarizing the conversation. */
function planCompaction(
  request: MessagesRequest,
  userText: string,
  context: PlanReplyContext,
  delayMilliseconds: number,
): ReplyPlan {
  const seed = hashText(canonicalJson({ ...request, stream: undefined }));
  const content = summarizeConversation(request, userText);
  const unsigned = {
    content,
    encrypted_content: `enc_${hashText(`${seed}|${content}`).slice(0, 48)}`,
    tool_changes: [],
  };
  return {
    kind: 'message',
    id: `msg_${seed.slice(20, 44)}`,
    content: [
      { type: 'compaction', ...unsigned, signature: context.compactionSigner.sign(unsigned) },
    ],
    stopReason: 'compaction',
    stopSequence: null,
    outputTokens: estimateTokens(content),
    delayMilliseconds,
  };
}

/**
 * A deterministic summary of bounded size, so a chain of compactions never grows: what the
 * conversation holds, the earlier summary's opening, the latest user request, and the
 * instructions when given.
 */
function summarizeConversation(request: MessagesRequest, userText: string): string {
  const blocks = request.messages.flatMap((message) =>
    blocksOf(message).map((block) => ({ role: message.role, block })),
  );
  const count = (test: (entry: (typeof blocks)[number]) => boolean) => blocks.filter(test).length;
  const userMessages = request.messages.filter(
    (message) => message.role === 'user' && blocksOf(message).some((b) => b.type === 'text'),
  ).length;
  const replies = count(({ role, block }) => role === 'assistant' && block.type === 'text');
  const toolCalls = count(({ block }) => block.type === 'tool_use');
  const earlier = blocks.find(({ block }) => block.type === 'compaction')?.block;
  const parts = [
    `Summary of the conversation so far: ${userMessages} user message(s), ${replies} answer(s), ${toolCalls} tool call(s).`,
  ];
  if (earlier?.type === 'compaction' && typeof earlier.content === 'string') {
    parts.push(`Before that: ${excerpt(earlier.content, 160)}`);
  }
  if (userText.length > 0) parts.push(`The latest request: "${excerpt(userText, 160)}".`);
  const instructions = request.compaction?.instructions?.trim();
  if (instructions) parts.push(`Summarized as instructed: "${excerpt(instructions, 80)}".`);
  return parts.join(' ');
}

/** The latest `context-window` directive in any user message of the conversation. */
function findContextWindow(messages: readonly MessageParam[]): number | undefined {
  let tokens: number | undefined;
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const parsed = parseDirectives(textOf(message));
    if (!parsed.ok) continue;
    tokens = last(parsed.directives, 'context-window')?.tokens ?? tokens;
  }
  return tokens;
}

function consumeFailure(context: PlanReplyContext, key: string, times: number | undefined) {
  const fired = context.failureCounts.get(key) ?? 0;
  if (times !== undefined && fired >= times) return false;
  context.failureCounts.set(key, fired + 1);
  return true;
}

/** The latest user message that holds text of its own (not only tool results). */
function findAnchor(messages: readonly MessageParam[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role !== 'user') continue;
    if (blocksOf(message).some((block) => block.type === 'text')) return index;
  }
  return -1;
}

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string'
    ? [{ type: 'text', text: message.content }]
    : message.content;
}

function textOf(message: MessageParam): string {
  return blocksOf(message)
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n');
}

type ToolResultBlock = Extract<ContentBlockParam, { type: 'tool_result' }>;

function isToolResult(block: ContentBlockParam): block is ToolResultBlock {
  return block.type === 'tool_result';
}

function resultText(result: ToolResultBlock): string {
  if (typeof result.content === 'string') return result.content;
  return (result.content ?? [])
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join(' ');
}

function findToolName(messages: readonly MessageParam[], toolUseId: string): string | undefined {
  for (const message of messages) {
    for (const block of blocksOf(message)) {
      if (block.type === 'tool_use' && block.id === toolUseId) return block.name;
    }
  }
  return undefined;
}

/** A minimal input satisfying the tool's required properties. */
function sampleInput(tool: Tool, userText: string): Record<string, unknown> {
  const schema = tool.input_schema as {
    properties?: Record<string, { type?: unknown; enum?: unknown[] }>;
    required?: string[];
  };
  const input: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const property = schema.properties?.[name] ?? {};
    if (Array.isArray(property.enum) && property.enum.length > 0) {
      input[name] = property.enum[0];
      continue;
    }
    switch (property.type) {
      case 'number':
      case 'integer':
        input[name] = 1;
        break;
      case 'boolean':
        input[name] = true;
        break;
      case 'array':
        input[name] = [];
        break;
      case 'object':
        input[name] = {};
        break;
      default:
        input[name] = excerpt(userText, 80) || name;
    }
  }
  return input;
}

/** Cuts the reply to `max_tokens` the way the real API does: mid-block, stop reason max_tokens. */
function applyMaxTokens(
  blocks: ReplyBlock[],
  maxTokens: number,
): { blocks: ReplyBlock[]; truncated: boolean; outputTokens: number } {
  const kept: ReplyBlock[] = [];
  let budget = maxTokens;
  for (const block of blocks) {
    const tokens = estimateTokens(payloadOf(block));
    if (tokens <= budget) {
      kept.push(block);
      budget -= tokens;
      continue;
    }
    if (block.type === 'text' && budget > 0) {
      kept.push({ type: 'text', text: cutToBytes(block.text, budget * 4) });
    }
    return { blocks: kept, truncated: true, outputTokens: maxTokens };
  }
  return { blocks: kept, truncated: false, outputTokens: Math.max(1, maxTokens - budget) };
}

function payloadOf(block: ReplyBlock): unknown {
  switch (block.type) {
    case 'thinking':
      return block.thinking;
    case 'text':
      return block.text;
    case 'tool_use':
      return block.input;
    case 'compaction':
      return block.content;
    default:
      return assertNever(block);
  }
}

function cutToBytes(text: string, bytes: number): string {
  let result = '';
  let used = 0;
  for (const character of text) {
    used += Buffer.byteLength(character, 'utf8');
    if (used > bytes) break;
    result += character;
  }
  return result.trimEnd() || text.slice(0, 1);
}

const vocabulary =
  'the log keeps every chunk in order so a client can resume from its last sequence without gaps while the worker streams blocks and seals them after commit'.split(
    ' ',
  );

/** Exactly `count` deterministic words, capitalized and ending with a period. */
function generateWords(count: number, seed: string): string {
  if (count === 0) return '';
  const offset = Number.parseInt(seed.slice(0, 8), 16) || 0;
  const words = Array.from(
    { length: count },
    (_, index) => vocabulary[(offset + index) % vocabulary.length] ?? 'word',
  );
  const text = words.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function excerpt(text: string, length: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function last<Kind extends Directive['kind']>(
  directives: readonly Directive[],
  kind: Kind,
): Extract<Directive, { kind: Kind }> | undefined {
  return directives.findLast(
    (directive): directive is Extract<Directive, { kind: Kind }> => directive.kind === kind,
  );
}

function sum<Kind extends Directive['kind']>(
  directives: readonly Directive[],
  kind: Kind,
  value: (directive: Extract<Directive, { kind: Kind }>) => number,
): number {
  return directives
    .filter((directive): directive is Extract<Directive, { kind: Kind }> => directive.kind === kind)
    .reduce((total, directive) => total + value(directive), 0);
}
