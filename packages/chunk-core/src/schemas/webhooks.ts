import { z } from 'zod';
import { assertNever } from '../errors/assert-never';
import { type TurnDoneReason, TurnDoneReasonSchema, UsageSchema } from './events';

/** The events a webhook endpoint can subscribe to (contract). */
export const WebhookEventTypeSchema = z.enum([
  'turn.completed',
  'turn.failed',
  'turn.cancelled',
  'approval.requested',
]);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

/**
 * The event a turn's end is announced as: `max_steps` is a completed turn that hit its limit, and
 * a turn that paused for a decision announces `approval.requested` (a team's backend can then read
 * the tab's waiting calls and decide).
 */
export function webhookEventTypeOf(reason: TurnDoneReason): WebhookEventType {
  switch (reason) {
    case 'completed':
    case 'max_steps':
      return 'turn.completed';
    case 'error':
      return 'turn.failed';
    case 'cancelled':
      return 'turn.cancelled';
    case 'awaiting_approval':
      return 'approval.requested';
    default:
      return assertNever(reason);
  }
}

/** What a turn's end event says: the turn's own usage and the tab's last seq when it ended. */
export const TurnEndedWebhookDataSchema = z.object({
  tabId: z.uuid(),
  turnId: z.uuid(),
  reason: TurnDoneReasonSchema,
  usage: UsageSchema,
  lastSeq: z.number().int().nonnegative(),
});
export type TurnEndedWebhookData = z.infer<typeof TurnEndedWebhookDataSchema>;

/** The body of a webhook request, the Standard Webhooks payload shape (contract). */
export const WebhookEventSchema = z.object({
  type: WebhookEventTypeSchema,
  /** ISO 8601, when the turn's end was recorded. */
  timestamp: z.string(),
  data: TurnEndedWebhookDataSchema,
});
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;

/** A tenant's webhook endpoint; its secret is shown only when created or rotated. */
export const WebhookEndpointSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  eventTypes: z.array(WebhookEventTypeSchema),
  createdAt: z.number().int().nonnegative(),
  /** When the secret was last set (creation or rotation), epoch ms. */
  secretSetAt: z.number().int().nonnegative(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

export const WebhookDeliveryStatusSchema = z.enum(['pending', 'delivered', 'failed']);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatusSchema>;

/** One event on its way to one endpoint, and how its attempts went. Times are epoch ms. */
export const WebhookDeliverySchema = z.object({
  id: z.uuid(),
  /** The `webhook-id` header: the same for every attempt and every endpoint of one event. */
  messageId: z.string(),
  eventType: WebhookEventTypeSchema,
  tabId: z.uuid(),
  turnId: z.uuid(),
  status: WebhookDeliveryStatusSchema,
  attempts: z.number().int().nonnegative(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  lastAttemptAt: z.number().int().nullable(),
  /** When the next attempt is due (or, while one runs, when it counts as lost); null once done. */
  nextAttemptAt: z.number().int().nullable(),
  deliveredAt: z.number().int().nullable(),
  createdAt: z.number().int().nonnegative(),
});
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;
