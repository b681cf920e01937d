import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { webhookRetryDelay } from './webhook-retry-delay';

const backoff = { baseMs: 1_000, maxMs: 60_000 };

describe('webhookRetryDelay', () => {
  it('doubles from the base with every failed attempt, up to the cap', () => {
    const ceiling = (attempt: number) => webhookRetryDelay(attempt, backoff, () => 1);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50, 5000].map(ceiling)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('stays between half and all of the exponential delay, whatever the jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, random) => {
          const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 1));
          const delay = webhookRetryDelay(attempt, backoff, () => random);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
          expect(delay).toBeLessThanOrEqual(ceiling);
        },
      ),
    );
  });
});
