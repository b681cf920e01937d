import { sleep } from './abortable';
import { errorStatus, retryDelay } from './retry-policy';
import type { RunningTurn } from './turn';

/**
 * After a model call of the turn failed (a step's, or a compaction's) on attempt `attempt`
 * (1-based): logs the failure as `what`, and when the retry policy allows another attempt,
 * counts the retry and waits for it (backoff with jitter, never shorter than retry-after; the
 * wait ends early when `signal` aborts). False when the call must not be made again.
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
  await sleep(delay, signal);
  return true;
}
