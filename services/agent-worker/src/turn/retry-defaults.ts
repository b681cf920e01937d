/**
 * How model calls are retried (the SDK's own retries are off: the worker owns the policy).
 * Apart from retry-policy.ts, which loads the SDK, so the configuration's schema can name the
 * defaults without it.
 */
export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A retry-after longer than this is not waited for: the attempt fails instead. */
  maxRetryAfterMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};
