/**
 * Tool calls that wait for a person (docs/architecture.md, "Approvals"), as pure functions: which
 * calls of a step wait, what the pause appends and records, and what a paused turn does when a
 * worker wakes it.
 */

import type { Tab } from '@chunklog/chunk-core';
import {
  type ApprovalDecisionData,
  type ApprovalPolicy,
  type Chunk,
  type ChunkDraft,
  needsApproval,
  type TabConfig,
} from '@chunklog/chunk-core';
import type { ApprovalDecisionRecord, InboxMessage, TabWaiting } from '@chunklog/store';
import type { StepToolCall } from './stream-step';

/** The policy a tab's turns follow: the tab's own, else the deployment's. */
export function approvalPolicyOf(
  config: TabConfig,
  deployment: ApprovalPolicy | undefined,
): ApprovalPolicy | undefined {
  return config.approval ?? deployment;
}

/**
 * Splits a step's calls into those that run now and those that wait. A call the turn cannot run
 * anyway (an unknown tool, input that is no JSON object) never waits: it gets its error result.
 */
export function splitGatedCalls(
  calls: readonly StepToolCall[],
  policy: ApprovalPolicy | undefined,
  offered: (name: string) => boolean,
): { free: StepToolCall[]; gated: StepToolCall[] } {
  const free: StepToolCall[] = [];
  const gated: StepToolCall[] = [];
  for (const call of calls) {
    const waits =
      call.invalidInput === undefined && offered(call.name) && needsApproval(policy, call.name);
    (waits ? gated : free).push(call);
  }
  return { free, gated };
}

/** The request chunks of a step's waiting calls, and the state the paused turn records. */
export function planApprovalRequests(input: {
  gated: readonly StepToolCall[];
  policy: ApprovalPolicy | undefined;
  /** The tools' input schemas by name, which an edited input is checked against. */
  inputSchemas: ReadonlyMap<string, Record<string, unknown>>;
  turnId: string;
  step: number;
  cancelGeneration: number;
  now: number;
  newId: () => string;
}): { append: ChunkDraft[]; waiting: TabWaiting } {
  const { gated, turnId, step } = input;
  const seconds = input.policy?.expiresAfterSeconds;
  const expiresAt = seconds === undefined ? null : input.now + seconds * 1000;
  return {
    append: gated.map((call) => ({
      id: input.newId(),
      turnId,
      step,
      role: 'system',
      type: 'approval_request',
      data: { callId: call.callId, name: call.name, arguments: call.arguments, expiresAt },
    })),
    waiting: {
      turnId,
      step,
      cancelGeneration: input.cancelGeneration,
      expiresAt,
      calls: gated.map((call) => {
        const inputSchema = input.inputSchemas.get(call.name);
        return {
          callId: call.callId,
          name: call.name,
          arguments: call.arguments,
          ...(inputSchema === undefined ? {} : { inputSchema }),
        };
      }),
    },
  };
}

/** Why the system decided a call no person did. */
export const SYSTEM_DENIAL_REASONS = {
  expired: 'expired',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
} as const;

/** A decision on its way into the log: the chunk's data and id. */
export type PlannedDecision = ApprovalDecisionData & { chunkId: string };

/** What a woken paused turn does. */
export type ResumePlan =
  /** Calls are still undecided and nothing forces them: the turn keeps waiting. */
  | { kind: 'wait'; wakeIds: string[] }
  /**
   * The turn goes on: the decisions the system makes for undecided calls (to record first, a
   * person's recorded one winning a race), and the wake-ups it answers.
   */
  | { kind: 'resume'; systemDenials: PlannedDecision[]; wakeIds: string[] };

/**
 * Decides what a woken paused turn does. Every call decided: it resumes. Otherwise the turn is
 * forced on by a cancel made after it began (undecided calls denied `cancelled`), an
 * `interrupt` message (denied `interrupted`; the message follows the results) or the expiry
 * (denied `expired`); else it keeps waiting. `inbox` is read before `decisions`, so every
 * wake-up it holds is for a decision `decisions` has.
 */
export function planResume(input: {
  waiting: TabWaiting;
  decisions: readonly ApprovalDecisionRecord[];
  inbox: readonly InboxMessage[];
  cancelGeneration: number;
  now: number;
  newId: () => string;
}): ResumePlan {
  const { waiting } = input;
  const wakeIds = input.inbox
    .filter((message) => message.mode === 'approval')
    .map((message) => message.chunkId);
  const decided = new Set(input.decisions.map((decision) => decision.callId));
  const undecided = waiting.calls.filter((call) => !decided.has(call.callId));
  if (undecided.length === 0) return { kind: 'resume', systemDenials: [], wakeIds };
  const reason =
    input.cancelGeneration > waiting.cancelGeneration
      ? SYSTEM_DENIAL_REASONS.cancelled
      : input.inbox.some(
            (message) =>
              message.mode === 'interrupt' && message.cancelGeneration >= waiting.cancelGeneration,
          )
        ? SYSTEM_DENIAL_REASONS.interrupted
        : waiting.expiresAt !== null && input.now >= waiting.expiresAt
          ? SYSTEM_DENIAL_REASONS.expired
          : null;
  if (reason === null) return { kind: 'wait', wakeIds };
  return {
    kind: 'resume',
    wakeIds,
    systemDenials: undecided.map((call) => ({
      chunkId: input.newId(),
      callId: call.callId,
      name: call.name,
      decision: 'deny',
      reason,
      decidedBy: 'system',
      decidedAt: input.now,
    })),
  };
}

/** The decision chunks a resumed turn appends: one per waiting call, unless already in the log. */
export function planDecisionChunks(input: {
  waiting: TabWaiting;
  decisions: readonly ApprovalDecisionRecord[];
  log: readonly Chunk[];
}): ChunkDraft[] {
  const { waiting } = input;
  const logged = new Set(
    input.log.flatMap((chunk) => (chunk.type === 'approval_decision' ? [chunk.data.callId] : [])),
  );
  const byCall = new Map(input.decisions.map((decision) => [decision.callId, decision]));
  return waiting.calls.flatMap((call): ChunkDraft[] => {
    const decision = byCall.get(call.callId);
    if (decision === undefined || logged.has(call.callId)) return [];
    return [
      {
        id: decision.chunkId,
        turnId: waiting.turnId,
        step: waiting.step,
        role: 'system',
        type: 'approval_decision',
        data: {
          callId: call.callId,
          name: call.name,
          decision: decision.decision,
          ...(decision.input === undefined ? {} : { input: decision.input }),
          ...(decision.reason === undefined ? {} : { reason: decision.reason }),
          decidedBy: decision.decidedBy,
          decidedAt: decision.decidedAt,
        },
      },
    ];
  });
}

/** The calls a resumed turn runs: the approved ones, with a person's edited input if any. */
export function approvedCalls(
  waiting: TabWaiting,
  decisions: readonly ApprovalDecisionRecord[],
): StepToolCall[] {
  const byCall = new Map(decisions.map((decision) => [decision.callId, decision]));
  return waiting.calls.flatMap((call) => {
    const decision = byCall.get(call.callId);
    if (decision?.decision !== 'approve') return [];
    return [{ callId: call.callId, name: call.name, arguments: decision.input ?? call.arguments }];
  });
}

/** The result a denied call gets: the model reads why. */
export function deniedResult(reason: string | undefined): string {
  switch (reason) {
    case SYSTEM_DENIAL_REASONS.expired:
      return 'The tool call was not run: nobody approved it before it expired.';
    case SYSTEM_DENIAL_REASONS.cancelled:
      return 'The tool call was not run: the turn was cancelled while it waited for approval.';
    case SYSTEM_DENIAL_REASONS.interrupted:
      return 'The tool call was not run: a new message arrived while it waited for approval.';
    default:
      return reason === undefined || reason.length === 0
        ? 'The tool call was denied by the user.'
        : `The tool call was denied by the user: ${reason}`;
  }
}

/**
 * Whether a tab no turn runs on has work for a worker: a message waiting, or for a paused turn
 * only what wakes it (a decision, an interrupting message, the expiry); the other messages wait
 * behind the decision.
 */
export function hasWork(
  tab: Pick<Tab, 'status' | 'waiting'>,
  inbox: readonly Pick<InboxMessage, 'mode'>[],
  now = Date.now(),
): boolean {
  if (tab.status !== 'waiting' || tab.waiting === null) return inbox.length > 0;
  const expired = tab.waiting.expiresAt !== null && now >= tab.waiting.expiresAt;
  return expired || inbox.some((message) => WAKING_MODES.has(message.mode));
}

/** What wakes a paused turn (the store's sweep reads the same list). */
const WAKING_MODES: ReadonlySet<string> = new Set(['approval', 'interrupt']);
