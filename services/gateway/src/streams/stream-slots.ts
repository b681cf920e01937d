import { DomainError } from '@chunklog/chunk-core';
import type { Principal } from '../auth/auth-plugin';

/** What a 429 for too many streams asks a client to wait before it opens another. */
export const STREAM_SLOT_RETRY_AFTER_SECONDS = 5;

export interface StreamSlotLimits {
  /** Streams open at once per API key. */
  streamsPerKey: number;
  /** Streams open at once per tenant, over all its keys and tickets. */
  streamsPerTenant: number;
}

/**
 * Counts the streams (SSE and WebSocket) each API key and each tenant holds open, so one key
 * cannot hold every socket the gateway has: a stream over either cap is refused before it
 * opens. Ticket streams count for their tenant only (a ticket is not a key).
 */
export class StreamSlots {
  readonly #limits: StreamSlotLimits;
  readonly #open = new Map<string, number>();

  constructor(limits: StreamSlotLimits) {
    this.#limits = limits;
  }

  /**
   * Takes a slot for the caller, or throws `rate_limited` naming the cap reached. Returns the
   * release, which may be called any number of times.
   */
  take(principal: Principal): () => void {
    const counters: [string, number, string][] = [
      [`tenant:${principal.tenantId}`, this.#limits.streamsPerTenant, 'per tenant'],
    ];
    if (principal.rateKey.startsWith('key:')) {
      counters.push([principal.rateKey, this.#limits.streamsPerKey, 'per API key']);
    }
    for (const [counter, limit, scope] of counters) {
      if ((this.#open.get(counter) ?? 0) >= limit) {
        throw new DomainError(
          'rate_limited',
          `too many open streams: at most ${limit} ${scope}; close one, or retry later`,
        );
      }
    }
    for (const [counter] of counters) this.#open.set(counter, (this.#open.get(counter) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const [counter] of counters) {
        const left = (this.#open.get(counter) ?? 1) - 1;
        if (left === 0) this.#open.delete(counter);
        else this.#open.set(counter, left);
      }
    };
  }
}
