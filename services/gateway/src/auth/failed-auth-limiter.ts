/**
 * Limits what guessing keys gets an address, without ever refusing a valid key: keys are checked
 * first, only failures are counted (per client address, in fixed one-minute windows), and only a
 * failure's answer turns from 401 into 429 once its address is over the limit. A client behind a
 * shared proxy or NAT with a valid key is served whatever others behind it guess.
 */

const WINDOW_MS = 60_000;

export interface FailedAuthLimiter {
  /**
   * Counts a failed authentication from `address`. Returns null while the address is within
   * the limit, else the seconds until its count restarts (the answer's `Retry-After`).
   */
  recordFailure(address: string): number | null;
}

export function createFailedAuthLimiter(options: {
  failuresPerMinute: number;
  clock: () => number;
}): FailedAuthLimiter {
  let windowStart = Number.NEGATIVE_INFINITY;
  const failures = new Map<string, number>();
  return {
    recordFailure(address) {
      const now = options.clock();
      if (now - windowStart >= WINDOW_MS) {
        windowStart = now;
        failures.clear();
      }
      const count = (failures.get(address) ?? 0) + 1;
      failures.set(address, count);
      if (count <= options.failuresPerMinute) return null;
      return Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000));
    },
  };
}
