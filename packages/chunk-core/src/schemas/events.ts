import { z } from 'zod';
import { ApprovalVerdictSchema, ChunkRoleSchema, ChunkSchema, ChunkTypeSchema } from './chunk';

/** Token usage summed over a step or a turn. */
export const UsageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadInputTokens: z.number().int().nonnegative(),
  cacheCreationInputTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof UsageSchema>;

/**
 * Why a turn (or a run of it) ended. `awaiting_approval`: the turn paused for a person's decision
 * on tool calls; it starts again, with the same turn id, once they are decided.
 */
export const TurnDoneReasonSchema = z.enum([
  'completed',
  'cancelled',
  'error',
  'max_steps',
  'awaiting_approval',
]);
export type TurnDoneReason = z.infer<typeof TurnDoneReasonSchema>;

export const TurnStartEventSchema = z.object({ tabId: z.uuid(), turnId: z.uuid() });
export const ChunkOpenEventSchema = z.object({
  tabId: z.uuid(),
  id: z.uuid(),
  turnId: z.uuid(),
  step: z.number().int().nonnegative(),
  role: ChunkRoleSchema,
  type: ChunkTypeSchema,
});
export const ChunkDeltaEventSchema = z.object({
  tabId: z.uuid(),
  id: z.uuid(),
  /** Length of the block's text before this delta. */
  offset: z.number().int().nonnegative(),
  text: z.string(),
});
export const ChunkSealEventSchema = z.object({ tabId: z.uuid(), chunk: ChunkSchema });
export const TurnDoneEventSchema = z.object({
  tabId: z.uuid(),
  turnId: z.uuid(),
  reason: TurnDoneReasonSchema,
  usage: UsageSchema,
});
/**
 * A failed model call of a running turn will be made again (a step's, or a compaction's):
 * published before the wait, so a reader can say "retrying (1 of 4)" instead of nothing. Live
 * only: a stream that connects during the wait does not get it. Whatever the turn publishes
 * next (a block opens or seals, the turn ends) means the wait is over.
 */
export const TurnRetryEventSchema = z.object({
  tabId: z.uuid(),
  turnId: z.uuid(),
  /** The turn's step whose model call failed. */
  step: z.number().int().nonnegative(),
  /** Which retry comes next, from 1: the failed attempt's number (attempt `retry + 1` follows). */
  retry: z.number().int().positive(),
  /** Retries the worker's policy allows a call in all (its attempts less the first). */
  maxRetries: z.number().int().positive(),
  /** How long the worker waits before the retry (backoff, or the API's retry-after). */
  delayMs: z.number().int().nonnegative(),
  /**
   * Why the call failed, in a few words: the HTTP status and the API's error type (`529
   * overloaded_error`), a mid-stream error type, `connection failed`, `timed out`. Never the
   * upstream body.
   */
  reason: z.string().max(200),
});

/** A call waiting for a decision, as the live event and the tab's `waiting` state show it. */
export const WaitingCallSchema = z.object({
  callId: z.string().min(1),
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
});
export type WaitingCall = z.infer<typeof WaitingCallSchema>;

/** The turn paused: these calls of its step wait for a decision (their request chunks are sealed). */
export const ApprovalRequestedEventSchema = z.object({
  tabId: z.uuid(),
  turnId: z.uuid(),
  calls: z.array(WaitingCallSchema),
  expiresAt: z.number().int().nonnegative().nullable(),
});
/** A waiting call was decided (its decision chunk is sealed); the turn goes on. */
export const ApprovalResolvedEventSchema = z.object({
  tabId: z.uuid(),
  turnId: z.uuid(),
  callId: z.string().min(1),
  decision: ApprovalVerdictSchema,
  reason: z.string().optional(),
});

/** Live event kinds, as they appear in NATS subjects and SSE event names (contract). */
export const LiveEventKindSchema = z.enum([
  'turn-start',
  'chunk-open',
  'chunk-delta',
  'chunk-seal',
  'turn-retry',
  'turn-done',
  'approval-requested',
  'approval-resolved',
]);
export type LiveEventKind = z.infer<typeof LiveEventKindSchema>;

/** A live event with its kind (docs/architecture.md, "Live events"). */
export const LiveEventSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('turn-start'), data: TurnStartEventSchema }),
  z.object({ event: z.literal('chunk-open'), data: ChunkOpenEventSchema }),
  z.object({ event: z.literal('chunk-delta'), data: ChunkDeltaEventSchema }),
  z.object({ event: z.literal('chunk-seal'), data: ChunkSealEventSchema }),
  z.object({ event: z.literal('turn-retry'), data: TurnRetryEventSchema }),
  z.object({ event: z.literal('turn-done'), data: TurnDoneEventSchema }),
  z.object({ event: z.literal('approval-requested'), data: ApprovalRequestedEventSchema }),
  z.object({ event: z.literal('approval-resolved'), data: ApprovalResolvedEventSchema }),
]);
export type LiveEvent = z.infer<typeof LiveEventSchema>;
export type TurnStartEvent = z.infer<typeof TurnStartEventSchema>;
export type ChunkOpenEvent = z.infer<typeof ChunkOpenEventSchema>;
export type ChunkDeltaEvent = z.infer<typeof ChunkDeltaEventSchema>;
export type ChunkSealEvent = z.infer<typeof ChunkSealEventSchema>;
export type TurnRetryEvent = z.infer<typeof TurnRetryEventSchema>;
export type TurnDoneEvent = z.infer<typeof TurnDoneEventSchema>;
export type ApprovalRequestedEvent = z.infer<typeof ApprovalRequestedEventSchema>;
export type ApprovalResolvedEvent = z.infer<typeof ApprovalResolvedEventSchema>;

/** NATS subject of a tab's live events of one kind (contract). */
export function liveEventSubject(tabId: string, kind: LiveEventKind): string {
  return `chunklog.tab.${tabId}.evt.${kind}`;
}

/** NATS subject matching every live event of a tab. */
export function tabEventsSubject(tabId: string): string {
  return `chunklog.tab.${tabId}.evt.*`;
}
