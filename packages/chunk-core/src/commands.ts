import { z } from 'zod';
import { ChunkRoleSchema, ChunkTypeSchema } from './chunk';

/** Durable work queue (JetStream on NATS) through which the gateway hands messages to workers. */
export const INTAKE_QUEUE = 'chunklog-intake';

export const MessageModeSchema = z.enum(['interrupt', 'enqueue', 'reject']);

/** A user message accepted by the gateway (202) for a worker to run. */
export const MessageCommandSchema = z.object({
  tabId: z.uuid(),
  /** Id of the user chunk the message becomes; also the queue's dedupe id. */
  chunkId: z.uuid(),
  text: z.string().min(1),
  mode: MessageModeSchema,
  /** Epoch ms at which the gateway accepted it. */
  acceptedAt: z.number().int().nonnegative(),
});
export type MessageCommand = z.infer<typeof MessageCommandSchema>;

/** Published (not queued) to stop a tab's running turn; the worker holding the tab acts on it. */
export function cancelSubject(tabId: string): string {
  return `chunklog.tab.${tabId}.cmd.cancel`;
}
export const CancelCommandSchema = z.object({ tabId: z.uuid() });

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
