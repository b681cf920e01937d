import { sleep } from './abortable';
import { errorStatus, retryDelay, retryReason } from './retry-policy';
import type { RunningTurn } from './turn';

/**
 * After a model call of the turn failed (a step's, or a compaction's) on attempt `attempt`
 * (1-based): logs the failure as `what`, and when the retry policy allows another attempt,
 * counts the retry, publishes `turn-retry` (so a reader sees "retrying" rather than nothing)
 * and waits for it (backoff with jitter, never shorter than retry-after; the wait ends early
 * when `signal` aborts). False when the call must not be made again.
 */
export async function waitToRetry(
  turn: RunningTurn,
  failure: { error: unknown; attempt: number; step: number; what: string },
  signal: AbortSignal,
): Promise<boolean> {
  const { deps, session, turnId } = turn;
  const { error, attempt, step, what } = failure;
  const delay = retryDelay(error, attempt, deps.retry);
  deps.logger.warn(
    { err: error, tabId: session.tabId, turnId, step, attempt, retryInMs: delay },
    what,
  );
  if (delay === null) return false;
  deps.metrics?.modelRetries.inc({ status: String(errorStatus(error) ?? 'none') });
  await session.publish({
    event: 'turn-retry',
    data: {
      tabId: session.tabId,
      turnId,
      step,
      retry: attempt,
      maxRetries: Math.max(1, deps.retry.maxAttempts - 1),
      delayMs: delay,
      reason: retryReason(error),
    },
  });
  await sleep(delay, signal);
  return true;
}
