import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStreamTickets } from './stream-ticket';

const tickets = createStreamTickets({ secret: 'a-secret-of-enough-length', ttlMs: 1_000 });

describe('stream tickets', () => {
  it('verify what they issued, until they expire', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.string({ minLength: 1 }), fc.nat(1e12), (tabId, tenantId, now) => {
        const { ticket, expiresAt } = tickets.issue({ tabId, tenantId, now });
        expect(expiresAt).toBe(now + 1_000);
        expect(tickets.verify(ticket, now + 999)).toEqual({ tabId, tenantId, expiresAt });
        expect(tickets.verify(ticket, now + 1_000)).toBeNull();
      }),
    );
  });

  it('refuse any change to a ticket and tickets of another secret', () => {
    const other = createStreamTickets({ secret: 'another-secret-of-enough-length', ttlMs: 1_000 });
    const tabId = crypto.randomUUID();
    const { ticket } = tickets.issue({ tabId, tenantId: 't', now: 0 });
    fc.assert(
      fc.property(
        fc.nat(ticket.length - 1),
        fc.constantFrom('A', 'b', '.', '-', '0'),
        (index, character) => {
          const changed = ticket.slice(0, index) + character + ticket.slice(index + 1);
          if (changed !== ticket) expect(tickets.verify(changed, 1)).toBeNull();
        },
      ),
    );
    expect(other.verify(ticket, 1)).toBeNull();
    expect(() => createStreamTickets({ secret: 'short', ttlMs: 1 })).toThrow();
  });
});
