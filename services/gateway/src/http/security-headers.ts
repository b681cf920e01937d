import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/** What both pages' policies end with: the API at their own origin, no plugin, base or framing. */
const sameOriginOnly = [
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
];

/**
 * The chat app's policy: its own scripts, styles and API only; no inline script, `eval`, inline
 * style, plugin, frame or `<base>`; images from itself or `data:`/`blob:` only, so text in a
 * message cannot make the browser fetch anything elsewhere even if some markup got through.
 */
export const webAppContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  ...sameOriginOnly,
].join('; ');

/**
 * The policy of the Swagger UI at `/docs` (its plugin's `staticCSP`): its own scripts, which are
 * files (no inline script), and the OpenAPI document from the same origin. Its bundle adds a
 * `<style>` element of its own at run time, hence inline styles there (never inline script).
 */
export const docsContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  ...sameOriginOnly,
].join('; ');

/**
 * The policy of every other response (JSON, SSE, errors): nothing of it runs or loads anything,
 * should a browser ever render one as a page. `/docs` is left to its own (see `docsPrefix`).
 */
export const apiContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'";

/**
 * Headers every response carries: no MIME sniffing (a JSON body holding markup is never taken
 * for HTML), no framing (clickjacking the app or the docs), and no `Referer` sent from any page
 * the gateway serves (a link in a message does not tell where it was clicked).
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/**
 * Sets `securityHeaders` and `apiContentSecurityPolicy` on every response at the start of its
 * request, so errors, 404s and SSE streams (which copy the reply's headers) have them too;
 * routes that serve pages replace the policy with their own. Paths under `docsPrefix` keep the
 * policy the Swagger UI plugin gives them.
 */
export const securityHeadersPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { docsPrefix?: string } = {}) => {
    const docsPrefix = options.docsPrefix ?? '/docs';
    app.addHook('onRequest', async (request, reply) => {
      reply.headers(securityHeaders);
      const path = request.url;
      const underDocs =
        path === docsPrefix ||
        path.startsWith(`${docsPrefix}/`) ||
        path.startsWith(`${docsPrefix}?`);
      if (!underDocs) reply.header('content-security-policy', apiContentSecurityPolicy);
    });
  },
  { name: 'security-headers' },
);
