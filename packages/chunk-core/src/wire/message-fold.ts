/**
 * The wire builder's core: folds a tab's chunks, in seq order, into Anthropic request messages,
 * one chunk at a time, so a worker keeps the fold and adds only each step's new chunks. Two
 * rules hold for any log (docs/architecture.md, "The wire builder and prompt caching"): a
 * message is never rebuilt once a later chunk started the next one, and every decision depends
 * only on the chunks before it, so requests stay byte-stable as the log grows; and the result
 * always passes the API's request checks. A `compaction` chunk starts the fold over from its
 * block.
 */

import type { CompactionBlock } from '../compaction/compaction';
import { assertNever } from '../errors/assert-never';
import type { ChunkBody } from '../schemas/chunk';
import { fitChunkForWire } from './fit-chunk-for-wire';
import { toolResultText } from './tool-result-text';
import type {
  WireCompactionBlock,
  WireContentBlock,
  WireMessage,
  WireTextBlock,
  WireToolResultBlock,
  WireToolUseBlock,
} from './wire-types';

/** What the fold needs of a chunk: its body, its turn and step, and (optionally) its seq. */
export type FoldableChunk = ChunkBody & { turnId: string; step: number; seq?: number };

/** What stands in a request for user texts left out because their turn failed unanswered. */
export const LEFT_OUT_MESSAGE_TEXT =
  '(A message sent here is left out: the model failed to answer it.)';

/** Text of the user message put first when a log does not start with one. */
export const PLACEHOLDER_USER_TEXT = '(The earlier conversation is not available.)';

/** Result text given to a tool call that has no recorded result (cancel, crash, lost worker). */
export const MISSING_TOOL_RESULT_TEXT =
  'The tool call did not complete: it was cancelled or interrupted before a result was recorded.';

export { EMPTY_TOOL_RESULT_TEXT } from './tool-result-text';

/** Options of the wire builder. */
export type FoldOptions = {
  /**
   * The most UTF-8 bytes one chunk may take in a request; larger chunks are cut with a note
   * (see `fitChunkForWire`). Unset: chunks are sent whole.
   */
  maxChunkBytes?: number;
};

type ToolCallSlot = { callId: string; wireId: string; answered: boolean };

type AssistantDraft = {
  role: 'assistant';
  turnId: string;
  step: number;
  blocks: WireContentBlock[];
  /** False when this message follows another assistant message: merged by the API, its thinking would sit after text. */
  thinkingAllowed: boolean;
  hasNonThinking: boolean;
  calls: ToolCallSlot[];
};

type UserDraft = {
  role: 'user';
  /** The content of a closed user message this one continues (see `userDraft`). */
  carried: WireContentBlock[];
  results: WireToolResultBlock[];
  texts: WireTextBlock[];
  /** The turn of each of `texts`, by index: a turn that fails unanswered takes its texts back. */
  textTurns: string[];
  /** The calls of the assistant message just before, which this message answers. */
  calls: ToolCallSlot[];
};

/** The incremental wire builder: append chunks in seq order, read the messages at any time. */
export class MessageFold {
  /** Messages no later chunk can change. Treat what `messages()` returns as immutable. */
  private readonly closed: WireMessage[] = [];
  private draft: AssistantDraft | UserDraft | null = null;
  private readonly usedWireIds = new Set<string>();
  private highestSeq = 0;
  /** The highest `throughSeq` of the compactions folded: chunks at or below it are summarized. */
  private cut = 0;
  /** The chunks folded since the latest compaction, to fold again after the next one. */
  private kept: FoldableChunk[] = [];

  constructor(private readonly options: FoldOptions = {}) {}

  /** The highest seq folded so far (0 when none carried a seq). */
  get lastSeq(): number {
    return this.highestSeq;
  }

  /** Folds one chunk; a chunk whose seq is not above the last folded one is ignored (replays). */
  append(chunk: FoldableChunk): this {
    if (chunk.seq !== undefined) {
      if (chunk.seq <= this.highestSeq) return this;
      this.highestSeq = chunk.seq;
    }
    if (chunk.type === 'compaction') {
      this.startFrom(chunk.data.block, chunk.data.throughSeq);
      return this;
    }
    if (chunk.seq !== undefined && chunk.seq <= this.cut) return this;
    this.kept.push(chunk);
    this.fold(chunk);
    return this;
  }

  /** Restarts the messages from a compaction block, then folds the chunks after its cut again. */
  private startFrom(block: CompactionBlock, throughSeq: number): void {
    this.cut = Math.max(this.cut, throughSeq);
    this.closed.length = 0;
    this.closed.push({ role: 'assistant', content: [wireCompactionBlock(block)] });
    this.draft = null;
    this.usedWireIds.clear();
    this.kept = this.kept.filter((chunk) => chunk.seq === undefined || chunk.seq > this.cut);
    for (const chunk of this.kept) this.fold(chunk);
  }

  private fold(original: FoldableChunk): void {
    const maxChunkBytes = this.options.maxChunkBytes;
    const chunk = maxChunkBytes === undefined ? original : fitChunkForWire(original, maxChunkBytes);
    switch (chunk.type) {
      case 'text':
        if (chunk.role === 'assistant') this.appendAssistantText(chunk, chunk.data.text);
        else this.appendUserText(chunk.data.text, chunk.turnId);
        return;
      case 'thinking':
        this.appendThinking(chunk);
        return;
      case 'tool_call':
        this.appendToolCall(chunk);
        return;
      case 'tool_result':
        this.appendToolResult(chunk);
        return;
      case 'error':
        this.leaveOutUnansweredTexts(chunk.turnId);
        return;
      case 'system':
      case 'compaction':
      // A pause for a person's decision is the log's, not the model's: the call's result
      // (run, or denied) answers it, so the request after a decision keeps every earlier byte.
      case 'approval_request':
      case 'approval_decision':
        return;
      default:
        assertNever(chunk);
    }
  }

  /**
   * How many leading messages of `messages()` are final: no chunk appended later changes them.
   * The rest (one or two) belong to the step in progress: its assistant message and the
   * synthesized results for its pending calls, or the last message when the step has produced
   * nothing yet. Once a step's results are in, only the last message is open.
   */
  settledMessageCount(): number {
    const draft = this.draft;
    if (draft === null) return 0;
    // A draft that comes to nothing leaves the last closed message last: a later user chunk may
    // continue it, and as the final message it may be trimmed as a prefill.
    const draftIsEmpty =
      draft.role === 'assistant'
        ? finishAssistant(draft) === null && draft.calls.length === 0
        : finishUser(draft) === null;
    return Math.max(0, draftIsEmpty ? this.closed.length - 1 : this.closed.length);
  }

  /** Folds chunks in order. */
  appendAll(chunks: Iterable<FoldableChunk>): this {
    for (const chunk of chunks) this.append(chunk);
    return this;
  }

  /** The request messages for the log folded so far. */
  messages(): WireMessage[] {
    const tail: WireMessage[] = [];
    const draft = this.draft;
    if (draft !== null) {
      if (draft.role === 'assistant') {
        const message = finishAssistant(draft);
        if (message !== null) tail.push(message);
        if (draft.calls.length > 0) tail.push(userMessage(resultsFor([], draft.calls), []));
      } else {
        const message = finishUser(draft);
        if (message !== null) tail.push(message);
      }
    }
    const head = this.closed;
    if (head.length === 0 && tail[0]?.role !== 'user') tail.unshift(placeholderMessage());
    const messages = head.concat(tail);
    return trimFinalPrefill(messages);
  }

  private appendAssistantText(chunk: FoldableChunk, text: string): void {
    if (isBlank(text)) return;
    const draft = this.assistantDraft(chunk);
    draft.blocks.push({ type: 'text', text });
    draft.hasNonThinking = true;
  }

  private appendThinking(chunk: FoldableChunk & { type: 'thinking' }): void {
    const data = chunk.data;
    let block: WireContentBlock;
    if ('redacted' in data) {
      block = { type: 'redacted_thinking', data: data.redacted };
    } else if (typeof data.signature === 'string' && data.signature.length > 0) {
      // Kept verbatim, even with empty text: the signature covers the text byte for byte.
      block = { type: 'thinking', thinking: data.text, signature: data.signature };
    } else {
      return; // Cut off before its signature: the API would reject it, and it may be omitted.
    }
    const draft = this.assistantDraft(chunk);
    if (!draft.thinkingAllowed || draft.hasNonThinking) return;
    draft.blocks.push(block);
  }

  private appendToolCall(chunk: FoldableChunk & { type: 'tool_call' }): void {
    const draft = this.assistantDraft(chunk);
    const wireId = this.allocateWireId(chunk.data.callId);
    const input = isPlainObject(chunk.data.arguments) ? chunk.data.arguments : {};
    const block: WireToolUseBlock = {
      type: 'tool_use',
      id: wireId,
      name: chunk.data.name.length > 0 ? chunk.data.name : 'unknown_tool',
      input,
    };
    draft.blocks.push(block);
    draft.hasNonThinking = true;
    draft.calls.push({ callId: chunk.data.callId, wireId, answered: false });
  }

  private appendToolResult(chunk: FoldableChunk & { type: 'tool_result' }): void {
    const draft = this.userDraft();
    const slot = draft.calls.find((call) => !call.answered && call.callId === chunk.data.callId);
    if (slot === undefined) return; // Answers no call of the previous message: the API would reject it.
    slot.answered = true;
    const block: WireToolResultBlock = {
      type: 'tool_result',
      tool_use_id: slot.wireId,
      content: toolResultText(chunk.data.result),
    };
    if (chunk.data.isError) block.is_error = true;
    draft.results.push(block);
  }

  private appendUserText(text: string, turnId: string): void {
    if (isBlank(text)) return;
    const draft = this.userDraft();
    draft.texts.push({ type: 'text', text });
    draft.textTurns.push(turnId);
  }

  /**
   * A turn that ended in an error with its user texts unanswered takes them out of every later
   * request (behind `LEFT_OUT_MESSAGE_TEXT`): a message that made the model fail would fail each
   * new one too. Only the open message changes, so earlier requests keep their bytes.
   */
  private leaveOutUnansweredTexts(turnId: string): void {
    const draft = this.draft;
    if (draft === null || draft.role !== 'user') return;
    const keep = draft.textTurns.map((textTurn) => textTurn !== turnId);
    if (keep.every(Boolean)) return;
    draft.texts = draft.texts.filter((_text, index) => keep[index]);
    draft.textTurns = draft.textTurns.filter((_turn, index) => keep[index]);
    // A note in their place keeps the message: the one before it stays where it was, not last
    // (a last assistant message is trimmed as a prefill), so its bytes do not change.
    draft.texts.push({ type: 'text', text: LEFT_OUT_MESSAGE_TEXT });
    draft.textTurns.push('');
  }

  /** The assistant message of the chunk's step, starting it (and closing the draft) if needed. */
  private assistantDraft(chunk: FoldableChunk): AssistantDraft {
    const draft = this.draft;
    if (
      draft !== null &&
      draft.role === 'assistant' &&
      draft.turnId === chunk.turnId &&
      draft.step === chunk.step
    ) {
      return draft;
    }
    this.closeDraft();
    const next: AssistantDraft = {
      role: 'assistant',
      turnId: chunk.turnId,
      step: chunk.step,
      blocks: [],
      thinkingAllowed: !endsWithAssistantTurn(this.closed),
      hasNonThinking: false,
      calls: [],
    };
    this.draft = next;
    return next;
  }

  /** The user message after the current step, starting it if needed. */
  private userDraft(): UserDraft {
    const draft = this.draft;
    if (draft !== null && draft.role === 'user') return draft;
    let calls: ToolCallSlot[] = [];
    if (draft !== null) {
      // The step's assistant message is final now; its calls wait for their results here.
      this.pushClosed(finishAssistant(draft));
      calls = draft.calls;
    }
    // When the assistant message in between came to nothing (only unsigned thinking, say), the
    // last closed message is a user message, and still the last message of every build so far:
    // continue it rather than send two user messages, which the API would merge anyway.
    let carried: WireContentBlock[] = [];
    const last = this.closed.at(-1);
    if (last !== undefined && last.role === 'user' && calls.length === 0) {
      this.closed.pop();
      carried = last.content;
    }
    const next: UserDraft = {
      role: 'user',
      carried,
      results: [],
      texts: [],
      textTurns: [],
      calls,
    };
    this.draft = next;
    return next;
  }

  private closeDraft(): void {
    const draft = this.draft;
    if (draft === null) return;
    if (draft.role === 'assistant') {
      this.pushClosed(finishAssistant(draft));
      if (draft.calls.length > 0) this.pushClosed(userMessage(resultsFor([], draft.calls), []));
    } else {
      this.pushClosed(finishUser(draft));
    }
    this.draft = null;
  }

  private pushClosed(message: WireMessage | null): void {
    if (message === null) return;
    if (this.closed.length === 0 && message.role !== 'user') this.closed.push(placeholderMessage());
    this.closed.push(message);
  }

  /** A tool_use id the API accepts, unique within the log, derived from the chunk's call id. */
  private allocateWireId(callId: string): string {
    const base = callId.replace(/[^a-zA-Z0-9_-]/g, '_') || 'call';
    let candidate = base;
    for (let suffix = 2; this.usedWireIds.has(candidate); suffix += 1) {
      candidate = `${base}_${suffix}`;
    }
    this.usedWireIds.add(candidate);
    return candidate;
  }
}

/** Folds a whole log (chunks in seq order) into request messages; see `MessageFold`. */
export function buildMessages(
  chunks: Iterable<FoldableChunk>,
  options: FoldOptions = {},
): WireMessage[] {
  return new MessageFold(options).appendAll(chunks).messages();
}

/** Whether `message` is the one holding a compaction block, first in the messages. */
export function isCompactionMessage(message: WireMessage | undefined): boolean {
  return message?.content[0]?.type === 'compaction';
}

/**
 * Whether the messages end in an assistant turn, which a new assistant message would continue
 * (the API merges them). The compaction message does not count: the API takes its block apart
 * from the turns after it.
 */
function endsWithAssistantTurn(messages: readonly WireMessage[]): boolean {
  const last = messages.at(-1);
  return last !== undefined && last.role === 'assistant' && !isCompactionMessage(last);
}

/**
 * The block as it goes on the wire: its fields in one fixed order (the store may give them back
 * in another), so every request carries the same bytes for it.
 */
function wireCompactionBlock(block: CompactionBlock): WireCompactionBlock {
  const { type, content, encrypted_content, signature, tool_changes, ...rest } = block;
  const wire: WireCompactionBlock = { type, content, encrypted_content };
  if (signature !== undefined) wire.signature = signature;
  if (tool_changes !== undefined) wire.tool_changes = tool_changes;
  for (const key of Object.keys(rest).sort()) wire[key] = rest[key];
  return wire;
}

function finishAssistant(draft: AssistantDraft): WireMessage | null {
  let end = draft.blocks.length;
  // The API rejects thinking as an assistant message's last block (the step was cut after it).
  while (end > 0) {
    const type = draft.blocks[end - 1]?.type;
    if (type !== 'thinking' && type !== 'redacted_thinking') break;
    end -= 1;
  }
  if (end === 0) return null;
  return { role: 'assistant', content: draft.blocks.slice(0, end) };
}

function finishUser(draft: UserDraft): WireMessage | null {
  const content = [...draft.carried, ...resultsFor(draft.results, draft.calls), ...draft.texts];
  return content.length === 0 ? null : { role: 'user', content };
}

/**
 * One result per call, in the order the model made the calls (results land in the log in the
 * order they complete, or after a person's decision), a synthesized error result for each call
 * still unanswered.
 */
function resultsFor(
  results: readonly WireToolResultBlock[],
  calls: readonly ToolCallSlot[],
): WireToolResultBlock[] {
  const byWireId = new Map(results.map((result) => [result.tool_use_id, result]));
  return calls.map(
    (call): WireToolResultBlock =>
      byWireId.get(call.wireId) ?? {
        type: 'tool_result',
        tool_use_id: call.wireId,
        content: MISSING_TOOL_RESULT_TEXT,
        is_error: true,
      },
  );
}

function userMessage(results: WireToolResultBlock[], texts: WireTextBlock[]): WireMessage {
  return { role: 'user', content: [...results, ...texts] };
}

function placeholderMessage(): WireMessage {
  return { role: 'user', content: [{ type: 'text', text: PLACEHOLDER_USER_TEXT }] };
}

/**
 * A final assistant message is a prefill, and the API rejects one ending in whitespace. Only the
 * last message is touched, so earlier messages stay byte-stable.
 */
function trimFinalPrefill(messages: WireMessage[]): WireMessage[] {
  const last = messages.at(-1);
  if (last === undefined || last.role !== 'assistant') return messages;
  const lastBlock = last.content.at(-1);
  if (lastBlock === undefined || lastBlock.type !== 'text') return messages;
  const trimmed = lastBlock.text.trimEnd();
  if (trimmed === lastBlock.text) return messages;
  const content = [...last.content.slice(0, -1), { ...lastBlock, text: trimmed }];
  return [...messages.slice(0, -1), { role: 'assistant', content }];
}

function isBlank(text: string): boolean {
  return text.trim().length === 0;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
