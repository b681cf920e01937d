import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idempotentTabId } from './idempotent-tab-id';

describe('idempotentTabId', () => {
  it('is a version 5 UUID, the same for the same tenant and key, different otherwise', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        (tenant, otherTenant, key, otherKey) => {
          const id = idempotentTabId(tenant, key);
          expect(z.uuid().safeParse(id).success).toBe(true);
          expect(id[14]).toBe('5');
          expect(idempotentTabId(tenant, key)).toBe(id);
          if (otherKey !== key) expect(idempotentTabId(tenant, otherKey)).not.toBe(id);
          if (otherTenant !== tenant) expect(idempotentTabId(otherTenant, key)).not.toBe(id);
        },
      ),
    );
  });

  it('keeps the tenant and the key apart (no concatenation clash)', () => {
    expect(idempotentTabId('ab', 'c')).not.toBe(idempotentTabId('a', 'bc'));
  });
});
