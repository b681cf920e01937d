import { randomBytes } from 'node:crypto';

/** A new signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks has it. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
