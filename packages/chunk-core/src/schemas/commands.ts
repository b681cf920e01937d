import { z } from 'zod';
import { TabSchema } from '../tab/tab';
import type { WireTool } from '../wire/wire-types';
import { ChunkRoleSchema, ChunkTypeSchema } from './chunk';

/** Durable work queue (JetStream on NATS) through which the gateway hands messages to workers. */
export const INTAKE_QUEUE = 'chunklog-intake';

export const MessageModeSchema = z.enum(['interrupt', 'enqueue', 'reject']);

/**
 * What an intake item asks for: a message in one of the message modes, `compact`: compact the
 * tab now (`POST /v1/tabs/:tabId/compact`), as a turn of its own in its place in the queue, or
 * `approval`: wake the tab's paused turn (decisions were recorded, or it was cancelled).
 */
export const IntakeModeSchema = z.enum([...MessageModeSchema.options, 'compact', 'approval']);

/** A user message (or a compaction request) accepted by the gateway (202) for a worker to run. */
export const MessageCommandSchema = z
  .object({
    tabId: z.uuid(),
    /** Id of the user chunk the message becomes; also the queue's dedupe id. */
    chunkId: z.uuid(),
    /** The message; for `compact`, which appends no user chunk, its instructions (empty: the tab's own). */
    text: z.string(),
    mode: IntakeModeSchema,
    /** Epoch ms at which the gateway accepted it. */
    acceptedAt: z.number().int().nonnegative(),
    /**
     * The tab's cancel generation when the gateway accepted it: a later cancel (a higher
     * generation) stops its turn, an earlier one never does. Absent (an older gateway): the
     * generation the worker finds when it stores the message.
     */
    cancelGeneration: z.number().int().nonnegative().optional(),
  })
  .refine(
    (command) => !MessageModeSchema.safeParse(command.mode).success || command.text.length > 0,
    {
      path: ['text'],
      message: 'a message needs text',
    },
  );
export type MessageCommand = z.infer<typeof MessageCommandSchema>;

/**
 * Published (not queued) to stop a tab's running turn at once; the worker holding the tab acts
 * on it. The fast path only: the cancel itself is recorded in Postgres first (the tab's cancel
 * generation), and workers check that record too, so a cancel nobody heard is not lost.
 */
export function cancelSubject(tabId: string): string {
  return `chunklog.tab.${tabId}.cmd.cancel`;
}
export const CancelCommandSchema = z.object({
  tabId: z.uuid(),
  /** The tab's cancel generation this cancel recorded; absent: stop whatever turn is running. */
  generation: z.number().int().positive().optional(),
});
export type CancelCommand = z.infer<typeof CancelCommandSchema>;

/**
 * Published (not queued) by the worker that stored an `interrupt` message in its tab's inbox, so
 * that the worker holding the tab cuts the step it is running at once and answers the message.
 * The fast path only: the message is in the inbox, and the holder takes it in at the next step
 * boundary whether or not it hears this.
 */
export function interruptSubject(tabId: string): string {
  return `chunklog.tab.${tabId}.cmd.interrupt`;
}
export const InterruptNoticeSchema = z.object({
  tabId: z.uuid(),
  /** The message's chunk id: a holder that already appended it ignores the notice. */
  chunkId: z.uuid(),
  /** The message's cancel stamp (see MessageCommandSchema). */
  cancelGeneration: z.number().int().nonnegative().optional(),
});
export type InterruptNotice = z.infer<typeof InterruptNoticeSchema>;

/** Request/reply answered by the worker running the tab: the open block, for mid-block resume. */
export function snapshotSubject(tabId: string): string {
  return `chunklog.tab.${tabId}.snapshot`;
}
export const OpenBlockSnapshotSchema = z.object({
  open: z
    .object({
      id: z.uuid(),
      turnId: z.uuid(),
      step: z.number().int().nonnegative(),
      role: ChunkRoleSchema,
      type: ChunkTypeSchema,
      /** The block's whole text so far. */
      text: z.string(),
      /** The seq of the last chunk sealed before this snapshot was taken. */
      lastSeq: z.number().int().nonnegative(),
    })
    .nullable(),
});
export type OpenBlockSnapshot = z.infer<typeof OpenBlockSnapshotSchema>;

/**
 * Request/reply served by every worker in one queue group (`REQUEST_OPTIONS_QUEUE`), so one
 * answers: the options its turn loop would build a step request of a tab with this config from
 * (everything `buildRequest` takes besides the log). The gateway's `/context` builds the
 * messages itself from the log it read, which can be far larger than a bus message.
 */
export const REQUEST_OPTIONS_SUBJECT = 'chunklog.workers.request-options';
export const REQUEST_OPTIONS_QUEUE = 'chunklog-request-options';

export const RequestOptionsQuerySchema = z.object({
  tabId: z.uuid(),
  // As stored, unrefined: a tab stored before the thinking bound still gets its options.
  config: TabSchema.shape.config,
});
export type RequestOptionsQuery = z.infer<typeof RequestOptionsQuerySchema>;

// Kept as received, not rebuilt: parsing an object rebuilds it in the schema's key order, a tool
// that brings its own JSON schema may put `type` anywhere, and the cache compares bytes.
const WireInputSchemaSchema = z.custom<WireTool['input_schema']>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { type?: unknown }).type === 'object',
  { message: 'input_schema must be a JSON schema of type "object"' },
);

/** A tool as a worker offers it; the fields in the API's order, which is the registry's. */
export const WireToolSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  input_schema: WireInputSchemaSchema,
});

export const RequestOptionsReplySchema = z.object({
  options: z.object({
    model: z.string().min(1),
    maxTokens: z.number().int().positive(),
    system: z.string().optional(),
    thinking: z.object({ budgetTokens: z.number().int() }).optional(),
    /** In the order the worker offers them, remote tools included. */
    tools: z.array(WireToolSchema),
    /** The most UTF-8 bytes one chunk takes on the wire; larger ones are cut with a note. */
    maxChunkBytes: z.number().int().positive().optional(),
  }),
});
export type RequestOptionsReply = z.infer<typeof RequestOptionsReplySchema>;
