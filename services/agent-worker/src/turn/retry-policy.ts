import { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';

import { defaultRetryPolicy, type RetryPolicy } from './retry-defaults';

export { defaultRetryPolicy, type RetryPolicy };

// Mid-stream `error` events carry no HTTP status, only the error type.
const retryableTypes = new Set(['overloaded_error', 'api_error', 'rate_limit_error']);

/** The HTTP status of a model error, or undefined for a mid-stream error or a network failure. */
export function errorStatus(error: unknown): number | undefined {
  return error instanceof APIError && typeof error.status === 'number' ? error.status : undefined;
}

/** True for 408, 409, 429, 5xx (529 included), retryable mid-stream errors and network failures. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof APIConnectionError || error instanceof APIConnectionTimeoutError) {
    return true;
  }
  if (!(error instanceof APIError)) return false;
  const status = errorStatus(error);
  if (status === undefined) return error.type !== null && retryableTypes.has(error.type);
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The server's requested wait in ms (retry-after-ms, or retry-after in seconds or as a date). */
export function retryAfterMs(error: unknown, now: number = Date.now()): number | undefined {
  if (!(error instanceof APIError) || !error.headers) return undefined;
  const milliseconds = Number(error.headers.get('retry-after-ms'));
  if (error.headers.get('retry-after-ms') && Number.isFinite(milliseconds)) return milliseconds;
  const header = error.headers.get('retry-after');
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before attempt `attempt + 1` after `error` on attempt `attempt` (1-based), or null
 * when it must not be retried. Exponential backoff with jitter, never shorter than retry-after.
 */
export function retryDelay(
  error: unknown,
  attempt: number,
  policy: RetryPolicy = defaultRetryPolicy,
  random: () => number = Math.random,
): number | null {
  if (attempt >= policy.maxAttempts || !isRetryable(error)) return null;
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  // Jitter in [0.5, 1) of the backoff spreads retries of many workers hitting one overload.
  const jittered = backoff * (0.5 + random() / 2);
  const requested = retryAfterMs(error);
  if (requested === undefined) return Math.round(jittered);
  if (requested > policy.maxRetryAfterMs) return null;
  return Math.round(Math.max(requested, jittered));
}

/**
 * Why a retried call failed, in a few words a person may read: `529 overloaded_error`, a
 * mid-stream error's type, `timed out`, `connection failed`. Built from the status and the
 * API's error type only (a type that is not a plain identifier is left out), never from a
 * message or a body, which can hold anything upstream chose to send.
 */
export function retryReason(error: unknown): string {
  if (error instanceof APIConnectionTimeoutError) return 'timed out';
  if (error instanceof APIConnectionError) return 'connection failed';
  if (!(error instanceof APIError)) return 'failed';
  const type =
    typeof error.type === 'string' && /^[a-z_]{1,60}$/.test(error.type) ? error.type : '';
  const status = errorStatus(error);
  if (status === undefined) return type === '' ? 'stream failed' : `stream failed: ${type}`;
  return type === '' ? String(status) : `${status} ${type}`;
}
