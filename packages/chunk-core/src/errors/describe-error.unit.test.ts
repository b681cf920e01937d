import { describe, expect, it } from 'vitest';
import { describeError } from './errors';

describe('describeError', () => {
  it('says a thrown value in one line, with a cause that adds something', () => {
    expect(describeError(new Error('boom'))).toBe('boom');
    expect(describeError('plain')).toBe('plain');
    expect(
      describeError(
        new Error('connection refused', {
          cause: new Error('connect ECONNREFUSED 127.0.0.1:4222'),
        }),
      ),
    ).toBe('connection refused (connect ECONNREFUSED 127.0.0.1:4222)');
    // A cause already in the message is not repeated.
    expect(describeError(new Error('a: b', { cause: new Error('b') }))).toBe('a: b');
  });

  it('reads a dual-stack connect failure (an AggregateError with no message) from its first error', () => {
    const failure = Object.assign(
      new AggregateError(
        [
          new Error('connect ECONNREFUSED ::1:5432'),
          new Error('connect ECONNREFUSED 127.0.0.1:5432'),
        ],
        '',
      ),
      { code: 'ECONNREFUSED' },
    );
    expect(describeError(failure)).toBe('ECONNREFUSED (connect ECONNREFUSED ::1:5432)');
  });
});
