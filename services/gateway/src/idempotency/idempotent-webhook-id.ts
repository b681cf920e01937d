import { nameBasedUuid } from './name-based-uuid';

/** The namespace of webhook endpoint ids derived from idempotency keys (fixed forever). */
const WEBHOOKS_NAMESPACE = 'b3e1a7c4-52d9-4f08-8c6e-1f4a9d27e5b3';

/**
 * The id a webhook endpoint created with an Idempotency-Key gets: the same tenant and key always
 * name the same endpoint, so a retry of a create whose answer was lost finds it (and its secret)
 * instead of adding one.
 */
export function idempotentWebhookId(tenantId: string, idempotencyKey: string): string {
  return nameBasedUuid(WEBHOOKS_NAMESPACE, JSON.stringify([tenantId, idempotencyKey]));
}
