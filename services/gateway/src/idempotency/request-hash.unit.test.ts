import { describe, expect, it } from 'vitest';
import { requestHash } from './request-hash';

describe('requestHash', () => {
  it('is the same for the same body in any key order, at any depth', () => {
    expect(
      requestHash({ text: 'a', mode: 'enqueue', config: { b: 1, a: [1, { y: 2, x: 1 }] } }),
    ).toBe(requestHash({ config: { a: [1, { x: 1, y: 2 }], b: 1 }, mode: 'enqueue', text: 'a' }));
  });

  it('differs for any other value, and treats absent and undefined alike', () => {
    const base = requestHash({ text: 'a', mode: 'interrupt' });
    expect(requestHash({ text: 'b', mode: 'interrupt' })).not.toBe(base);
    expect(requestHash({ text: 'a', mode: 'enqueue' })).not.toBe(base);
    expect(requestHash({ text: 'a', mode: 'interrupt', title: undefined })).toBe(base);
    expect(requestHash({ list: [1, 2] })).not.toBe(requestHash({ list: [2, 1] }));
    expect(requestHash(undefined)).toBe(requestHash(null));
    expect(requestHash({})).not.toBe(requestHash(null));
  });
});
