import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Signs thinking text the way the real API does in spirit: an opaque tag only it can verify. */
export interface ThinkingSigner {
  sign(thinking: string): string;
  verify(thinking: string, signature: string): boolean;
}

/**
 * HMAC-SHA256 of the thinking text under a per-simulator secret, base64. A replayed block whose
 * text or signature changed by one byte no longer verifies.
 */
export function createThinkingSigner(secret: Buffer | string = randomBytes(32)): ThinkingSigner {
  const sign = (thinking: string) =>
    createHmac('sha256', secret).update(thinking, 'utf8').digest('base64');
  return {
    sign,
    verify: (thinking, signature) => {
      const expected = Buffer.from(sign(thinking), 'utf8');
      const given = Buffer.from(signature, 'utf8');
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
