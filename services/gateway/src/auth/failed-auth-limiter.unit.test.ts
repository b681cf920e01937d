import { describe, expect, it } from 'vitest';
import { createFailedAuthLimiter } from './failed-auth-limiter';

describe('failed authentication limiter', () => {
  it('limits an address past its failures per minute, and only for the rest of that minute', () => {
    let now = 1_000_000;
    const limiter = createFailedAuthLimiter({ failuresPerMinute: 3, clock: () => now });
    expect([1, 2, 3].map(() => limiter.recordFailure('10.0.0.1'))).toEqual([null, null, null]);
    expect(limiter.recordFailure('10.0.0.1')).toBe(60);
    now += 45_500;
    expect(limiter.recordFailure('10.0.0.1')).toBe(15);
    // Another address behind the same gateway is counted apart.
    expect(limiter.recordFailure('10.0.0.2')).toBeNull();
    now += 14_500;
    expect(limiter.recordFailure('10.0.0.1')).toBeNull();
  });
});
