import type { Clock } from '../manual-clock';
import type { PromptBlock } from './list-prompt-blocks';

/** The input side of `usage`, as the real API reports it. */
export interface CacheUsage {
  /** Tokens after the last cache hit or write. */
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export interface PromptCacheOptions {
  clock: Clock;
  /** Prefixes shorter than this are never cached (Sonnet-class models: 1024). */
  minimumCacheableTokens: number;
  /** How many blocks before a missed breakpoint the API still looks for an earlier write. */
  lookbackBlocks: number;
}

/** The simulator's prompt cache: entries keyed by prefix hash, each with its expiry. */
export interface PromptCache {
  /** Reads and writes the cache for one request's prompt and says what it cost. */
  account(blocks: readonly PromptBlock[]): CacheUsage;
  /** Forgets every entry. */
  clear(): void;
  /** Number of live entries. */
  size(): number;
}

const ttlMilliseconds = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;

/**
 * Models the documented behaviour: each breakpoint first looks for its own prefix; on a miss
 * it looks back up to `lookbackBlocks` blocks for an earlier write to read from, then writes
 * its own prefix. A hit refreshes the entry's TTL.
 */
export function createPromptCache(options: PromptCacheOptions): PromptCache {
  const entries = new Map<string, { expiresAt: number; ttl: keyof typeof ttlMilliseconds }>();

  const lookup = (key: string): boolean => {
    const entry = entries.get(key);
    if (!entry) return false;
    const now = options.clock.now();
    if (entry.expiresAt <= now) {
      entries.delete(key);
      return false;
    }
    entry.expiresAt = now + ttlMilliseconds[entry.ttl];
    return true;
  };

  // Entries nobody asks for again would otherwise live forever in a long-running simulator.
  let accountsSinceSweep = 0;
  const sweep = () => {
    const now = options.clock.now();
    for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
  };

  return {
    account(blocks) {
      accountsSinceSweep += 1;
      if (accountsSinceSweep >= 256) {
        accountsSinceSweep = 0;
        sweep();
      }
      const cumulative: number[] = [];
      let total = 0;
      for (const block of blocks) {
        total += block.tokens;
        cumulative.push(total);
      }
      const tokensThrough = (index: number) => (index < 0 ? 0 : (cumulative[index] ?? 0));

      let readEnd = -1;
      const writes: { index: number; ttl: keyof typeof ttlMilliseconds }[] = [];
      blocks.forEach((block, index) => {
        if (!block.cacheControl) return;
        if (tokensThrough(index) < options.minimumCacheableTokens) return;
        if (lookup(block.prefixKey)) {
          readEnd = Math.max(readEnd, index);
          return;
        }
        for (let earlier = index - 1; earlier >= Math.max(0, index - options.lookbackBlocks); ) {
          const candidate = blocks[earlier];
          if (candidate && lookup(candidate.prefixKey)) {
            readEnd = Math.max(readEnd, earlier);
            break;
          }
          earlier -= 1;
        }
        writes.push({ index, ttl: block.cacheControl.ttl ?? '5m' });
      });

      const created = { '5m': 0, '1h': 0 };
      let covered = tokensThrough(readEnd);
      const now = options.clock.now();
      for (const write of writes) {
        const through = tokensThrough(write.index);
        if (through > covered) {
          created[write.ttl] += through - covered;
          covered = through;
        }
        const key = blocks[write.index]?.prefixKey;
        if (key) entries.set(key, { expiresAt: now + ttlMilliseconds[write.ttl], ttl: write.ttl });
      }

      const read = tokensThrough(readEnd);
      const creation = created['5m'] + created['1h'];
      return {
        input_tokens: total - read - creation,
        cache_creation_input_tokens: creation,
        cache_read_input_tokens: read,
        cache_creation: {
          ephemeral_5m_input_tokens: created['5m'],
          ephemeral_1h_input_tokens: created['1h'],
        },
      };
    },
    clear: () => entries.clear(),
    size: () => entries.size,
  };
}
