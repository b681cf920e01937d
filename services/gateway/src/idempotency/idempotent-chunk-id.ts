import { nameBasedUuid } from './name-based-uuid';

/**
 * The chunk id a message gets when the client sends an Idempotency-Key: a name-based UUID in
 * the tab's namespace, so the same key on the same tab always names the same chunk on every
 * gateway, and the queue's dedupe and the store's idempotent append turn a retry into a no-op.
 */
export function idempotentChunkId(tabId: string, idempotencyKey: string): string {
  return nameBasedUuid(tabId, idempotencyKey);
}
