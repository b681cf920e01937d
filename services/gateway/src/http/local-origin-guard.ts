import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { answer, sendError } from './error-handler';

export interface LocalOriginGuardOptions {
  /** Browser origins allowed to call the API (CORS_ORIGINS): their state changes are let in. */
  corsOrigins: readonly string[];
}

/** Methods a browser may send cross-site without a preflight or that change nothing. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * With auth off only the browser's same-origin policy guards the local gateway; this closes
 * the two ways around it, as local dev servers do: DNS rebinding (only loopback Host names are
 * served) and cross-site requests that need no preflight, WebSockets included (a state change
 * or upgrade from another site is refused unless CORS_ORIGINS lists it). Both answer 403.
 */
export const localOriginGuardPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: LocalOriginGuardOptions) => {
    const allowedOrigins = new Set(options.corsOrigins);
    const anyOrigin = allowedOrigins.has('*');
    app.addHook('onRequest', async (request, reply) => {
      const refusal = refusalOf(request, (origin) => anyOrigin || allowedOrigins.has(origin));
      if (refusal !== null) return sendError(reply, answer(403, 'forbidden', refusal));
    });
  },
  { name: 'chunklog-local-origin-guard' },
);

/** Why the request is refused, or null to serve it. */
function refusalOf(request: FastifyRequest, isAllowedOrigin: (origin: string) => boolean) {
  const host = hostName(request.headers.host);
  if (host === null || !isLoopbackName(host)) {
    return 'authentication is off: only requests to a loopback host name (localhost, 127.0.0.1, [::1]) are served';
  }
  const changesState = !SAFE_METHODS.has(request.method) || request.headers.upgrade !== undefined;
  if (!changesState) return null;
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    if (isAllowedOrigin(origin) || sameOrigin(origin, request.headers.host)) return null;
    return 'authentication is off: requests from another origin may not change anything (list it in CORS_ORIGINS)';
  }
  // No Origin (or an opaque one): a browser still says where the request came from.
  const site = request.headers['sec-fetch-site'];
  if (origin === 'null' || site === 'cross-site' || site === 'same-site') {
    return 'authentication is off: requests from another site may not change anything';
  }
  return null;
}

/** The host name of a Host header, without the port and IPv6 brackets; null if malformed. */
function hostName(header: string | undefined): string | null {
  if (header === undefined || header === '') return null;
  try {
    return new URL(`http://${header}`).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return null;
  }
}

/** Names that only ever mean this machine (`*.localhost` resolves to loopback by RFC 6761). */
function isLoopbackName(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
