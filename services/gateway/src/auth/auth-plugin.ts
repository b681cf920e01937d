import { createHash } from 'node:crypto';
import { DomainError } from '@chunklog/chunk-core';
import type { TenantStore } from '@chunklog/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { createFailedAuthLimiter } from './failed-auth-limiter';
import type { StreamTickets } from './stream-ticket';

/** Who is calling: the tenant every tab access is scoped to. */
export interface Principal {
  tenantId: string;
  /** What rate limits are counted by: the key's fingerprint, or the address when auth is off. */
  rateKey: string;
}

/** `public`: no credentials; `key`: API key; `stream`: API key or a ticket for the route's tab. */
export type AuthLevel = 'public' | 'key' | 'stream';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    auth?: AuthLevel;
  }
}

export interface AuthOptions {
  store: Pick<TenantStore, 'authenticate'>;
  tickets: StreamTickets;
  mode: 'keys' | 'off';
  /** The tenant every request acts as when auth is off. */
  localTenantId: string;
  clock: () => number;
  /** Failed authentications per client address per minute before its failures get 429s. */
  failedAttemptsPerMinute: number;
}

/** How long a verified key is trusted without asking the store again. */
const KEY_CACHE_MS = 10_000;
const KEY_CACHE_SIZE = 10_000;

const unauthorized = (message: string) => new DomainError('unauthorized', message);

function isLoopback(address: string | undefined): boolean {
  return (
    address === '127.0.0.1' ||
    address === '::1' ||
    address === '::ffff:127.0.0.1' ||
    (address?.startsWith('127.') ?? false)
  );
}

/** Authenticates every non-public route and sets `request.principal`. */
export const authPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: AuthOptions) => {
    const cache = new Map<string, { tenantId: string; expiresAt: number }>();
    // Per-key rate limits count only authenticated requests; guessing keys is limited here.
    const failedAuth = createFailedAuthLimiter({
      failuresPerMinute: options.failedAttemptsPerMinute,
      clock: options.clock,
    });

    async function tenantOfKey(key: string): Promise<{ tenantId: string; fingerprint: string }> {
      const fingerprint = createHash('sha256').update(key).digest('hex').slice(0, 32);
      const now = options.clock();
      const cached = cache.get(fingerprint);
      if (cached && cached.expiresAt > now) return { tenantId: cached.tenantId, fingerprint };
      const tenantId = await options.store.authenticate(key);
      if (!tenantId) throw unauthorized('invalid API key');
      if (cache.size >= KEY_CACHE_SIZE) cache.clear();
      cache.set(fingerprint, { tenantId, expiresAt: now + KEY_CACHE_MS });
      return { tenantId, fingerprint };
    }

    async function authenticate(request: FastifyRequest): Promise<Principal> {
      const level = request.routeOptions.config.auth ?? 'key';
      if (options.mode === 'off') {
        // Auth off is a loopback-only convenience: refuse it on any other interface.
        if (!isLoopback(request.socket.localAddress)) {
          throw unauthorized('authentication is off and only loopback clients are served');
        }
        return { tenantId: options.localTenantId, rateKey: `ip:${request.ip}` };
      }
      const ticket = (request.query as { ticket?: unknown } | undefined)?.ticket;
      if (level === 'stream' && typeof ticket === 'string') {
        const claims = options.tickets.verify(ticket, options.clock());
        const tabId = (request.params as { tabId?: unknown } | undefined)?.tabId;
        if (!claims || claims.tabId !== tabId) throw unauthorized('invalid or expired ticket');
        return { tenantId: claims.tenantId, rateKey: `tenant:${claims.tenantId}` };
      }
      const header = request.headers.authorization;
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match?.[1]) throw unauthorized('missing Authorization: Bearer <api key>');
      const { tenantId, fingerprint } = await tenantOfKey(match[1]);
      return { tenantId, rateKey: `key:${fingerprint}` };
    }

    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (request, reply) => {
      // Unmatched URLs fall through to the 404 handler without asking for credentials.
      const url = request.routeOptions.url;
      if (url === undefined) return;
      // The OpenAPI UI and document are public: they describe the API, they serve no data.
      if (url === '/docs' || url.startsWith('/docs/')) return;
      // CORS's catch-all OPTIONS route answers preflights of other origins with the 404.
      if (request.method === 'OPTIONS') return;
      if ((request.routeOptions.config.auth ?? 'key') === 'public') return;
      try {
        request.principal = await authenticate(request);
      } catch (error) {
        if (!(error instanceof DomainError) || error.code !== 'unauthorized') throw error;
        const retryAfterSeconds = failedAuth.recordFailure(request.ip);
        if (retryAfterSeconds === null) throw error;
        reply.header('retry-after', String(retryAfterSeconds));
        throw new DomainError('rate_limited', 'too many failed authentications, retry later');
      }
    });
  },
  { name: 'chunklog-auth' },
);

/** The caller's tenant; routes behind auth always have one. */
export function tenantOf(request: FastifyRequest): string {
  if (!request.principal) throw unauthorized('not authenticated');
  return request.principal.tenantId;
}
