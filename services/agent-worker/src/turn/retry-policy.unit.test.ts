import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isRetryable,
  type RetryPolicy,
  retryAfterMs,
  retryDelay,
  retryReason,
} from './retry-policy';

const policy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 100,
  maxDelayMs: 1000,
  maxRetryAfterMs: 5000,
};

function httpError(status: number, headers: Record<string, string> = {}): APIError {
  return APIError.generate(
    status,
    { type: 'error', error: { type: 'x', message: 'm' } },
    'm',
    new Headers(headers),
  );
}

function streamError(type: string): APIError {
  return new APIError(
    undefined,
    { type: 'error', error: { type, message: 'm' } },
    undefined,
    new Headers(),
    type as never,
  );
}

describe('isRetryable', () => {
  it('retries 408, 409, 429 and 5xx (529 included), never other 4xx', () => {
    for (const status of [408, 409, 429, 500, 502, 503, 529])
      expect(isRetryable(httpError(status))).toBe(true);
    for (const status of [400, 401, 403, 404, 413])
      expect(isRetryable(httpError(status))).toBe(false);
  });

  it('retries overloaded and api errors that arrive mid-stream, not invalid requests', () => {
    expect(isRetryable(streamError('overloaded_error'))).toBe(true);
    expect(isRetryable(streamError('api_error'))).toBe(true);
    expect(isRetryable(streamError('invalid_request_error'))).toBe(false);
  });

  it('retries network failures but never a user abort or a plain bug', () => {
    expect(isRetryable(new APIConnectionError({ message: 'reset' }))).toBe(true);
    expect(isRetryable(new APIUserAbortError())).toBe(false);
    expect(isRetryable(new TypeError('bug'))).toBe(false);
  });
});

describe('retryDelay', () => {
  it('honours retry-after in seconds and retry-after-ms', () => {
    expect(retryAfterMs(httpError(429, { 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(httpError(429, { 'retry-after-ms': '250' }))).toBe(250);
    expect(retryDelay(httpError(429, { 'retry-after': '2' }), 1, policy, () => 0)).toBe(2000);
  });

  it('gives up when the server asks for a longer wait than the policy allows', () => {
    expect(retryDelay(httpError(429, { 'retry-after': '60' }), 1, policy)).toBeNull();
  });

  it('backs off exponentially within [half, full] of the capped delay and stops at maxAttempts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (attempt, random) => {
          const delay = retryDelay(httpError(529), attempt, policy, () => random);
          const full = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
          expect(delay).not.toBeNull();
          expect(delay!).toBeGreaterThanOrEqual(Math.floor(full / 2));
          expect(delay!).toBeLessThanOrEqual(full);
        },
      ),
    );
    expect(retryDelay(httpError(529), policy.maxAttempts, policy)).toBeNull();
    expect(retryDelay(httpError(400), 1, policy)).toBeNull();
  });
});

describe('retryReason', () => {
  it('names the status and the error type, never the message or the body', () => {
    const overloaded = APIError.generate(
      529,
      { type: 'error', error: { type: 'overloaded_error', message: 'secret upstream text' } },
      'secret upstream text',
      new Headers(),
    );
    expect(retryReason(overloaded)).toBe('529 overloaded_error');
    expect(retryReason(streamError('api_error'))).toBe('stream failed: api_error');
    expect(retryReason(new APIConnectionTimeoutError())).toBe('timed out');
    expect(retryReason(new APIConnectionError({ message: 'ECONNRESET 10.0.0.7:443' }))).toBe(
      'connection failed',
    );
    expect(retryReason(new Error('anything at all'))).toBe('failed');
  });

  it('leaves out an error type that is not a plain identifier', () => {
    const odd = APIError.generate(
      503,
      { type: 'error', error: { type: '<b>evil</b> {"x":1}', message: 'm' } },
      'm',
      new Headers(),
    );
    expect(retryReason(odd)).toBe('503');
    expect(retryReason(streamError('not an identifier!'))).toBe('stream failed');
  });
});
