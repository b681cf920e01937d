import { NotFoundError } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { StoreHealth } from './store-health';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

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
