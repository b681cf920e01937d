import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/** Which browser origins may call the API (CORS_ORIGINS). */
export interface CorsOptions {
  /** Exact origins (`https://chat.example.com`), or `*` for any origin. */
  origins: readonly string[];
}

const allowedMethods = 'GET, POST, PATCH, DELETE';
/**
 * Everything a client sends that is not CORS-safelisted: auth, JSON, retries, SSE resume, and
 * its own request id.
 */
const allowedHeaders = 'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Request-Id';
/** Response headers a client acts on beyond the safelisted ones: the rate limit's, the request id. */
const exposedHeaders =
  'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id';
/** How long a browser may reuse a preflight answer. */
const preflightMaxAgeSeconds = 600;

/**
 * CORS for browser frontends on other origins. A preflight from an allowed origin is answered
 * 204 here, before authentication (browsers send it without credentials); every response to an
 * allowed origin says so. A request from any other origin gets no CORS header, which is what
 * makes the browser refuse it: the server itself serves it as before (CORS is not auth).
 */
export const corsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: CorsOptions) => {
    const anyOrigin = options.origins.includes('*');
    const allowed = new Set(options.origins);
    app.addHook('onRequest', async (request, reply) => {
      // The answer depends on Origin unless every origin gets the same one: caches must know.
      if (!anyOrigin) reply.header('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin === undefined || !(anyOrigin || allowed.has(origin))) return;
      reply.header('access-control-allow-origin', anyOrigin ? '*' : origin);
      const preflight =
        request.method === 'OPTIONS' &&
        request.headers['access-control-request-method'] !== undefined;
      if (!preflight) {
        reply.header('access-control-expose-headers', exposedHeaders);
        return;
      }
      reply
        .header('access-control-allow-methods', allowedMethods)
        .header('access-control-allow-headers', allowedHeaders)
        .header('access-control-max-age', String(preflightMaxAgeSeconds))
        .code(204);
      return reply.send();
    });
  },
  { name: 'chunklog-cors' },
);
