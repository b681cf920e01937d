import { createHmac } from 'node:crypto';

/** What a Standard Webhooks signature covers. */
export interface SignedContent {
  /** The `webhook-id` header. */
  messageId: string;
  /** The `webhook-timestamp` header: epoch seconds. */
  timestamp: number;
  /** The exact request body. */
  body: string;
}

const SECRET_PREFIX = 'whsec_';

/**
 * The `webhook-signature` header of a request, as Standard Webhooks defines it: `v1,` and the
 * base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the base64 part of the `whsec_` secret.
 */
export function signWebhook(secret: string, content: SignedContent): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const signature = createHmac('sha256', key)
    .update(`${content.messageId}.${content.timestamp}.${content.body}`)
    .digest('base64');
  return `v1,${signature}`;
}
