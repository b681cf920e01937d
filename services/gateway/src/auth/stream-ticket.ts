import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

const TicketClaimsSchema = z.object({
  tabId: z.uuid(),
  tenantId: z.string().min(1),
  expiresAt: z.number().int(),
});
export type StreamTicketClaims = z.infer<typeof TicketClaimsSchema>;

/**
 * Short-lived, tab-scoped credentials for clients that cannot send headers (EventSource).
 * Stateless: an HMAC over the claims, so any gateway sharing the secret accepts it.
 */
export interface StreamTickets {
  issue(input: { tabId: string; tenantId: string; now: number }): {
    ticket: string;
    expiresAt: number;
  };
  /** The claims of a well-signed, unexpired ticket, or null. */
  verify(ticket: string, now: number): StreamTicketClaims | null;
}

export function createStreamTickets(options: { secret: string; ttlMs: number }): StreamTickets {
  if (options.secret.length < 16) throw new Error('ticketSecret must be at least 16 characters');
  const sign = (body: string) =>
    createHmac('sha256', options.secret).update(body).digest('base64url');
  return {
    issue({ tabId, tenantId, now }) {
      const expiresAt = now + options.ttlMs;
      const body = Buffer.from(JSON.stringify({ tabId, tenantId, expiresAt })).toString(
        'base64url',
      );
      return { ticket: `${body}.${sign(body)}`, expiresAt };
    },
    verify(ticket, now) {
      const [body, signature, extra] = ticket.split('.');
      if (!body || !signature || extra !== undefined) return null;
      const expected = Buffer.from(sign(body));
      const given = Buffer.from(signature);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return null;
      }
      const claims = TicketClaimsSchema.safeParse(decoded);
      if (!claims.success || claims.data.expiresAt <= now) return null;
      return claims.data;
    },
  };
}
