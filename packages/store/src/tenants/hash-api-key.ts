import { createHash } from 'node:crypto';

/** The stored form of an API key: its sha256 in hex. Keys are random, so no salt is needed. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
