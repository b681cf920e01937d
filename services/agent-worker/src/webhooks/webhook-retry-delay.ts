/** The delays of a delivery's retries. */
export interface WebhookBackoff {
  /** The delay after the first failed attempt; it doubles with every failure after that. */
  baseMs: number;
  /** No delay is longer than this. */
  maxMs: number;
}

/**
 * How long to wait after failed attempt number `attempt` (1-based): exponential, capped, with
 * "equal jitter" (between half and all of the exponential delay), so endpoints that failed
 * together, after an outage of theirs, are not all retried in the same instant.
 */
export function webhookRetryDelay(
  attempt: number,
  backoff: WebhookBackoff,
  random: () => number = Math.random,
): number {
  // The exponent stops growing long before 2^exponent could overflow the cap's comparison.
  const exponential = backoff.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40);
  const ceiling = Math.min(backoff.maxMs, exponential);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
