import { createHash } from 'node:crypto';

/**
 * The chunk id a message gets when the client sends an Idempotency-Key: a name-based
 * (version 5) UUID in the tab's namespace, so the same key on the same tab always names the
 * same chunk on every gateway, and the queue's dedupe and the store's idempotent append
 * turn a retry into a no-op.
 */
export function idempotentChunkId(tabId: string, idempotencyKey: string): string {
  const namespace = Buffer.from(tabId.replaceAll('-', ''), 'hex');
  const hash = createHash('sha1').update(namespace).update(idempotencyKey, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
