import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idempotentChunkId } from './idempotent-chunk-id';

describe('idempotentChunkId', () => {
  it('is a valid version 5 UUID, the same for the same tab and key, different otherwise', () => {
    fc.assert(
      fc.property(
        fc.uuid(),
        fc.uuid(),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        (tab, otherTab, key, otherKey) => {
          const id = idempotentChunkId(tab, key);
          expect(z.uuid().safeParse(id).success).toBe(true);
          expect(id[14]).toBe('5');
          expect(idempotentChunkId(tab, key)).toBe(id);
          if (otherKey !== key) expect(idempotentChunkId(tab, otherKey)).not.toBe(id);
          if (otherTab !== tab) expect(idempotentChunkId(otherTab, key)).not.toBe(id);
        },
      ),
    );
  });
});
