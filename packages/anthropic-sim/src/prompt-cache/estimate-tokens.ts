import { canonicalJson } from './canonical-json';

/**
 * The simulator's deterministic token count: ceil(UTF-8 bytes / 4), at least 1. Strings are
 * measured as they are; any other value (a content block, a tool definition, a tool input) by
 * its canonical JSON. Real tokenizers average about 4 bytes a token on English text, which
 * keeps figures in the right order of magnitude while staying reproducible.
 */
export function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : canonicalJson(value);
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}
