import fastifyCors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/** Which browser origins may call the API (CORS_ORIGINS). */
export interface CorsOptions {
  /** Exact origins (`https://chat.example.com`), or `*` for any origin. */
  origins: readonly string[];
}

const allowedMethods = ['GET', 'POST', 'PATCH', 'DELETE'];
/**
 * Everything a client sends that is not CORS-safelisted: auth, JSON, retries, SSE resume, its
 * own request id, and W3C trace context.
 */
export const corsAllowedHeaders = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'Last-Event-ID',
  'X-Request-Id',
  'traceparent',
  'tracestate',
];
/**
 * Response headers a client acts on beyond the safelisted ones: when to retry, the rate limit's,
 * the request id, and whether an idempotent request was a replay.
 */
export const corsExposedHeaders = [
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Request-Id',
  'Idempotent-Replayed',
];
/** How long a browser may reuse a preflight answer. */
const preflightMaxAgeSeconds = 600;

/**
 * CORS for browser frontends on other origins: an allowed origin's preflight is answered 204
 * before authentication (browsers send it without credentials); any other origin gets no CORS
 * header, so the browser refuses the answer (CORS is not auth).
 */
export const corsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: CorsOptions) => {
    const anyOrigin = options.origins.includes('*');
    const allowed = new Set(options.origins);
    await app.register(fastifyCors, {
      // A string answers every origin the same (no Vary); a function reflects an allowed origin
      // (with Vary: Origin) and gives any other none of the CORS headers, preflight included.
      origin: anyOrigin
        ? '*'
        : (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
      methods: allowedMethods,
      allowedHeaders: corsAllowedHeaders,
      exposedHeaders: corsExposedHeaders,
      maxAge: preflightMaxAgeSeconds,
      // Any OPTIONS from an allowed origin gets the preflight answer, rather than the plugin's
      // plain-text 400 for one without Access-Control-Request-Method.
      strictPreflight: false,
    });
  },
  { name: 'chunklog-cors' },
);
