import { assertNever, type Chunk, type TurnDoneReason, toolResultText } from '@chunklog/chunk-core';
import type { FinishReason, UIMessageChunk } from 'ai';
import type { StreamEvent } from '../resume-filter';
import { answerPartKind, chunkText } from './answer-chunk';

/** Where an answer's stream starts: after its user chunk, or inside a turn already known. */
export interface AnswerStart {
  /** Deliver seals with a seq above this. */
  after: number;
  /** The user chunk the answer follows: its seal names the turn. */
  userChunkId: string | null;
  /** The answering turn, when known before the stream starts. */
  turnId: string | null;
  /**
   * Set when the stream goes on with an assistant message the chat holds already (its tool
   * calls waited for a person, and the chat has just sent the decisions).
   */
  continued?: ContinuedAnswer;
}

/** An assistant message whose turn paused for approvals, as the chat holds it. */
export interface ContinuedAnswer {
  /** The message's id: no `start` is sent, the parts extend it. */
  messageId: string;
  /** Its tool calls, by call id: the approval id of each that waited for a person ('' if none). */
  calls: Readonly<Record<string, string>>;
  /** The calls the chat just decided: the paused turn resumes once their decisions are in. */
  decided: readonly string[];
}

interface OpenBlock {
  kind: 'text' | 'reasoning';
  /** Characters of the block's text sent so far. */
  length: number;
}

/** What the fold has sent so far; each event makes a new one. */
export interface AnswerState {
  readonly userChunkId: string | null;
  readonly turnId: string | null;
  /** The assistant message's id once `start` went out: its first answer chunk's id. */
  readonly messageId: string | null;
  /** The step whose `start-step` went out last. */
  readonly step: number | null;
  readonly openBlocks: Readonly<Record<string, OpenBlock>>;
  /** Tool calls sent, so a result is only sent for a call of this message. */
  readonly toolCallIds: readonly string[];
  /** The approval id of each call of this message that waited for a person, by call id. */
  readonly approvalIds: Readonly<Record<string, string>>;
  /** Calls whose approval request was sent and no decision yet. */
  readonly awaiting: readonly string[];
  /** Calls decided by the chat whose decision the log does not show yet (the turn will resume). */
  readonly resuming: readonly string[];
  /** Calls denied: their error result is sent as `tool-output-denied`. */
  readonly denied: readonly string[];
  /** `finish` went out: nothing follows. */
  readonly finished: boolean;
}

export interface AnswerStep {
  state: AnswerState;
  parts: UIMessageChunk[];
}

export function initialAnswerState(start: AnswerStart): AnswerState {
  const continued = start.continued;
  const approvalIds: Record<string, string> = {};
  for (const [callId, approvalId] of Object.entries(continued?.calls ?? {})) {
    if (approvalId !== '') approvalIds[callId] = approvalId;
  }
  return {
    userChunkId: start.userChunkId,
    turnId: start.turnId,
    messageId: continued?.messageId ?? null,
    step: null,
    openBlocks: {},
    toolCallIds: Object.keys(continued?.calls ?? {}),
    approvalIds,
    awaiting: [],
    resuming: continued?.decided ?? [],
    denied: [],
    finished: false,
  };
}

const finishReasons: Record<TurnDoneReason, FinishReason> = {
  completed: 'stop',
  error: 'error',
  cancelled: 'other',
  max_steps: 'other',
  // Paused for a person's decision on its tool calls: the answer goes on once they are decided.
  awaiting_approval: 'tool-calls',
};

/**
 * Folds one tab stream event into the AI SDK's UI message stream parts of one answer: the
 * assistant message of the turn that answers the user chunk `userChunkId` (or of `turnId`),
 * from its first chunk to the turn's end, or to the next user chunk of the turn (an interrupt
 * starts the next message). Text and thinking stream as they are typed; a block the stream
 * delivers already sealed (a resume's catch-up) comes whole; tool calls and results come as
 * dynamic tools run by the server (`providerExecuted`). Events of other turns are skipped.
 */
export function answerStep(state: AnswerState, event: StreamEvent): AnswerStep {
  if (state.finished) return { state, parts: [] };
  switch (event.event) {
    case 'chunk-open': {
      const { id, turnId, step, type } = event.data;
      if (turnId !== state.turnId || (type !== 'text' && type !== 'thinking')) {
        return { state, parts: [] };
      }
      const kind = type === 'text' ? 'text' : 'reasoning';
      const begun = begin(state, id, step);
      return {
        state: { ...begun.state, openBlocks: { ...state.openBlocks, [id]: { kind, length: 0 } } },
        parts: [...begun.parts, { type: `${kind}-start`, id }],
      };
    }
    case 'chunk-delta': {
      const { id, offset, text } = event.data;
      const block = state.openBlocks[id];
      if (block === undefined) return { state, parts: [] };
      // The stream trims resent text already; a delta overlapping what was sent is trimmed here too.
      const delta = text.slice(Math.max(0, block.length - offset));
      if (delta === '') return { state, parts: [] };
      return {
        state: {
          ...state,
          openBlocks: {
            ...state.openBlocks,
            [id]: { ...block, length: block.length + delta.length },
          },
        },
        parts: [{ type: `${block.kind}-delta`, id, delta }],
      };
    }
    case 'chunk-seal':
      return sealStep(state, event.data.chunk);
    case 'turn-done': {
      if (event.data.turnId !== state.turnId) return { state, parts: [] };
      return finish(state, finishReasons[event.data.reason]);
    }
    case 'stream-live':
      // The turn ended while no connection was open: its turn-done will not come again.
      if (state.turnId !== null && event.data.activeTurnId !== state.turnId) {
        // Still paused on decisions just sent, not on new requests: a worker resumes it soon.
        const toResume =
          event.data.status === 'waiting' &&
          state.resuming.length > 0 &&
          state.awaiting.length === 0;
        if (toResume) return { state, parts: [] };
        return finish(state, state.awaiting.length > 0 ? 'tool-calls' : undefined);
      }
      return { state, parts: [] };
    case 'turn-start':
    case 'turn-retry':
    case 'stream-end':
    case 'approval-requested':
    case 'approval-resolved':
      return { state, parts: [] };
    default:
      return assertNever(event);
  }
}

function sealStep(state: AnswerState, chunk: Chunk): AnswerStep {
  if (chunk.id === state.userChunkId) {
    return { state: { ...state, turnId: chunk.turnId }, parts: [] };
  }
  if (chunk.turnId !== state.turnId) return { state, parts: [] };
  // Another message joined the turn: what follows answers it, in a message of its own.
  if (chunk.role === 'user') return finish(state, 'other');
  const block = state.openBlocks[chunk.id];
  if (block !== undefined) {
    const rest = chunkText(chunk).slice(block.length);
    const { [chunk.id]: _sealed, ...openBlocks } = state.openBlocks;
    return {
      state: { ...state, openBlocks },
      parts: [
        ...(rest === ''
          ? []
          : [{ type: `${block.kind}-delta` as const, id: chunk.id, delta: rest }]),
        { type: `${block.kind}-end`, id: chunk.id },
      ],
    };
  }
  if (chunk.type === 'approval_request' || chunk.type === 'approval_decision') {
    return approvalStep(state, chunk);
  }
  const kind = answerPartKind(chunk);
  switch (kind) {
    case 'text':
    case 'reasoning': {
      const text = chunkText(chunk);
      const begun = begin(state, chunk.id, chunk.step);
      return {
        state: begun.state,
        parts: [
          ...begun.parts,
          { type: `${kind}-start`, id: chunk.id },
          ...(text === '' ? [] : [{ type: `${kind}-delta` as const, id: chunk.id, delta: text }]),
          { type: `${kind}-end`, id: chunk.id },
        ],
      };
    }
    case 'tool-call': {
      if (chunk.type !== 'tool_call') return { state, parts: [] };
      const { callId, name, arguments: input } = chunk.data;
      const begun = begin(state, chunk.id, chunk.step);
      const tool = { toolCallId: callId, toolName: name, dynamic: true, providerExecuted: true };
      return {
        state: { ...begun.state, toolCallIds: [...state.toolCallIds, callId] },
        parts: [
          ...begun.parts,
          { type: 'tool-input-start', ...tool },
          { type: 'tool-input-available', ...tool, input },
        ],
      };
    }
    case 'tool-result': {
      if (chunk.type !== 'tool_result' || !state.toolCallIds.includes(chunk.data.callId)) {
        return { state, parts: [] };
      }
      const { callId, result, isError } = chunk.data;
      const tool = { toolCallId: callId, dynamic: true, providerExecuted: true };
      if (state.denied.includes(callId)) {
        // The denial's reason is on the part's approval; the tool never ran.
        return { state, parts: [{ type: 'tool-output-denied', toolCallId: callId }] };
      }
      return {
        state,
        parts: [
          isError
            ? { type: 'tool-output-error', ...tool, errorText: toolResultText(result) }
            : { type: 'tool-output-available', ...tool, output: result },
        ],
      };
    }
    case null:
      if (chunk.type === 'error') {
        // The model failed for good: the SDK shows the chat in its error state.
        return {
          state: { ...state, finished: true },
          parts: [{ type: 'error', errorText: chunk.data.message }],
        };
      }
      return { state, parts: [] };
    default:
      return assertNever(kind);
  }
}

/**
 * A call of this message waits for a person (`tool-approval-request`: the SDK shows the part as
 * `approval-requested`, approval id = the request chunk's id), or was decided, by this chat or
 * anyone else (`tool-approval-response`).
 */
function approvalStep(
  state: AnswerState,
  chunk: Chunk & { type: 'approval_request' | 'approval_decision' },
): AnswerStep {
  const { callId } = chunk.data;
  if (!state.toolCallIds.includes(callId)) return { state, parts: [] };
  if (chunk.type === 'approval_request') {
    return {
      state: {
        ...state,
        approvalIds: { ...state.approvalIds, [callId]: chunk.id },
        awaiting: [...state.awaiting, callId],
      },
      parts: [{ type: 'tool-approval-request', approvalId: chunk.id, toolCallId: callId }],
    };
  }
  const approvalId = state.approvalIds[callId];
  const next: AnswerState = {
    ...state,
    awaiting: state.awaiting.filter((id) => id !== callId),
    resuming: state.resuming.filter((id) => id !== callId),
    denied: chunk.data.decision === 'deny' ? [...state.denied, callId] : state.denied,
  };
  if (approvalId === undefined) return { state: next, parts: [] };
  const { decision, reason } = chunk.data;
  return {
    state: next,
    parts: [
      {
        type: 'tool-approval-response',
        approvalId,
        approved: decision === 'approve',
        ...(reason === undefined ? {} : { reason }),
      },
    ],
  };
}

/** `start` before the message's first part, `start-step` (after `finish-step`) at each new step. */
function begin(state: AnswerState, chunkId: string, step: number): AnswerStep {
  const parts: UIMessageChunk[] = [];
  let next = state;
  if (state.messageId === null) {
    parts.push({ type: 'start', messageId: chunkId });
    next = { ...next, messageId: chunkId };
  }
  if (state.step !== step) {
    if (state.step !== null) parts.push({ type: 'finish-step' });
    parts.push({ type: 'start-step' });
    next = { ...next, step };
  }
  return { state: next, parts };
}

function finish(state: AnswerState, finishReason: FinishReason | undefined): AnswerStep {
  const parts: UIMessageChunk[] = [];
  // A message needs an id even when the turn ended before any answer chunk (a cancel).
  if (state.messageId === null) parts.push({ type: 'start', messageId: state.turnId ?? undefined });
  for (const [id, block] of Object.entries(state.openBlocks)) {
    parts.push({ type: `${block.kind}-end`, id });
  }
  if (state.step !== null) parts.push({ type: 'finish-step' });
  parts.push(finishReason === undefined ? { type: 'finish' } : { type: 'finish', finishReason });
  return { state: { ...state, openBlocks: {}, finished: true }, parts };
}
