import { ConflictError, NotFoundError } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { isStoreUnavailable, StoreHealth } from './store-health';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isStoreUnavailable', () => {
  it('knows a server that is down, restarting or cut off', () => {
    expect(
      isStoreUnavailable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')),
    ).toBe(true);
    expect(isStoreUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isStoreUnavailable(withCode('the database system is starting up', '57P03'))).toBe(true);
    expect(isStoreUnavailable(withCode('terminating connection', '57P01'))).toBe(true);
    expect(isStoreUnavailable(withCode('connection failure', '08006'))).toBe(true);
    expect(isStoreUnavailable(new AggregateError([withCode('x', 'ECONNREFUSED')]))).toBe(true);
    expect(isStoreUnavailable(new Error('wrapped', { cause: withCode('x', 'ECONNRESET') }))).toBe(
      true,
    );
  });

  it('leaves answers and bugs alone', () => {
    expect(isStoreUnavailable(new NotFoundError('tab not found'))).toBe(false);
    expect(isStoreUnavailable(new ConflictError('expected seq 3'))).toBe(false);
    expect(isStoreUnavailable(withCode('syntax error', '42601'))).toBe(false);
    expect(isStoreUnavailable(new TypeError('undefined is not a function'))).toBe(false);
    expect(isStoreUnavailable('ECONNREFUSED')).toBe(false);
  });
});

describe('StoreHealth', () => {
  it('is unreachable from the first failed call to the next answer, whatever it says', () => {
    let now = 1_000;
    const health = new StoreHealth(() => now);
    expect(health.snapshot()).toEqual({ store: 'reachable' });
    health.report(withCode('refused', 'ECONNREFUSED'));
    now += 500;
    health.report(withCode('refused', 'ECONNREFUSED'));
    expect(health.snapshot()).toEqual({ store: 'unreachable', unreachableForMs: 500 });
    health.report(new NotFoundError('an answer all the same'));
    expect(health.reachable).toBe(true);
  });
});
