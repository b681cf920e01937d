/**
 * What a turn appends next, as pure functions of the log, the inbox and what the turn has
 * heard. The turn loop (turn-runner.ts) reads, calls these, and writes what they return.
 */
import {
  type Chunk,
  type ChunkDraft,
  describeError,
  errorChunk,
  systemNoticeChunk,
  toolResultChunk,
  unansweredToolCalls,
  userTextChunk,
} from '@chunklog/chunk-core';
import type { InboxMessage } from '@chunklog/store';
import { errorStatus } from './retry-policy';

/** The waiting message that opens the next turn, or none. */
export function pickOpener(waiting: readonly InboxMessage[]): InboxMessage | undefined {
  // The oldest stamp first: a message accepted before a cancel opens (and ends) the cancelled
  // turn even when the intake stored a later one first.
  return waiting.reduce<InboxMessage | undefined>(
    (oldest, message) =>
      oldest === undefined || message.cancelGeneration < oldest.cancelGeneration ? message : oldest,
    undefined,
  );
}

/** The turn's opening user chunk, unless a worker that died already wrote it. */
export function planOpening(
  log: readonly Chunk[],
  message: Pick<InboxMessage, 'chunkId' | 'text'>,
  turnId: string,
): ChunkDraft[] {
  if (log.some((chunk) => chunk.id === message.chunkId)) return [];
  return [userTextChunk({ id: message.chunkId, turnId, step: 0 }, message.text)];
}

/** What waiting messages become after a step: chunks to append, inbox entries done with. */
export interface InboxPlan {
  append: ChunkDraft[];
  /** Inbox entries to remove (their chunks are in the log, or in `append`). */
  remove: string[];
  /** How many interrupts `append` holds: each makes the model answer again. */
  interrupts: number;
}

/**
 * Folds waiting `interrupt` messages into the turn after `step`'s tool results and refuses
 * `reject` ones with a notice; `enqueue` messages wait for a turn of their own. Once the turn is
 * cancelled (`cancelledAt`), only messages accepted before the cancel are taken: later ones
 * wait for a turn of their own.
 */
export function planInbox(input: {
  log: readonly Chunk[];
  waiting: readonly InboxMessage[];
  cancelledAt: number | null;
  turnId: string;
  step: number;
  newId: () => string;
}): InboxPlan {
  const { waiting, cancelledAt, turnId, step, newId } = input;
  const known = new Set(input.log.map((chunk) => chunk.id));
  const plan: InboxPlan = { append: [], remove: [], interrupts: 0 };
  for (const message of waiting) {
    if (known.has(message.chunkId)) {
      // Appended by a worker that died before clearing its inbox entry.
      plan.remove.push(message.chunkId);
      continue;
    }
    if (cancelledAt !== null && message.cancelGeneration >= cancelledAt) continue;
    if (message.mode === 'interrupt') {
      plan.append.push(userTextChunk({ id: message.chunkId, turnId, step }, message.text));
      plan.interrupts++;
      plan.remove.push(message.chunkId);
    } else if (message.mode === 'reject') {
      plan.append.push(
        systemNoticeChunk(
          { id: newId(), turnId, step },
          'message-rejected',
          'A message was rejected: a turn was running.',
        ),
      );
      plan.remove.push(message.chunkId);
    }
  }
  return plan;
}

/** Error results for the turn's calls that will never be answered, so the log builds a valid request. */
export function planUnansweredResults(
  log: readonly ChunkDraft[],
  turnId: string,
  why: string,
  newId: () => string,
): ChunkDraft[] {
  return unansweredToolCalls(log, turnId).map((call) =>
    toolResultChunk(
      { id: newId(), turnId, step: call.step },
      { callId: call.data.callId, name: call.data.name, result: why, isError: true },
    ),
  );
}

/** What to do before a step's model call. */
export type StepStart =
  | { kind: 'call-model' }
  | { kind: 'cancelled' }
  /** The tab's step cap is reached: the notice says so in the log (turn-done is live only). */
  | { kind: 'max-steps'; append: ChunkDraft[] };

export function planStepStart(input: {
  step: number;
  maxSteps: number;
  cancelled: boolean;
  turnId: string;
  newId: () => string;
}): StepStart {
  const { step, maxSteps, turnId } = input;
  if (input.cancelled) return { kind: 'cancelled' };
  if (step < maxSteps) return { kind: 'call-model' };
  return {
    kind: 'max-steps',
    append: [
      systemNoticeChunk(
        { id: input.newId(), turnId, step: step - 1 },
        'max-steps',
        `The turn stopped after ${maxSteps} model steps, the tab's step cap.`,
      ),
    ],
  };
}

/** Whether the turn goes on after a step: the model asked for more, or someone interrupted. */
export function continuesAfterStep(input: {
  toolCalls: number;
  stopReason: string | null;
  interrupts: number;
}): boolean {
  return input.toolCalls > 0 || input.stopReason === 'pause_turn' || input.interrupts > 0;
}

/**
 * The error chunk that ends a turn: a model call that failed for good (the model's, with its
 * HTTP status), or the turn itself failing for another reason (a bug, an outage; the system's).
 */
export function planFailure(input: {
  failed: 'model' | 'turn';
  error: unknown;
  turnId: string;
  step: number;
  newId: () => string;
}): ChunkDraft {
  const place = { id: input.newId(), turnId: input.turnId, step: input.step };
  const why = describeError(input.error);
  return input.failed === 'model'
    ? errorChunk(place, 'assistant', `The model call failed: ${why}`, errorStatus(input.error))
    : errorChunk(place, 'system', `The turn failed: ${why}`);
}
