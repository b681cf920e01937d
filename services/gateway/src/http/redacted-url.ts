import type { FastifyRequest } from 'fastify';

/**
 * Query parameters that carry credentials: stream tickets, and keys or tokens a client wrongly
 * put in the URL. Compared case-insensitively, with `-` and `_` ignored.
 */
const CREDENTIAL_PARAMETERS = new Set([
  'ticket',
  'key',
  'apikey',
  'token',
  'accesstoken',
  'auth',
  'authorization',
  'bearer',
  'password',
  'secret',
  'signature',
  'sig',
]);

const REDACTED = '[redacted]';

function isCredentialParameter(rawName: string): boolean {
  let name = rawName;
  try {
    name = decodeURIComponent(rawName.replaceAll('+', ' '));
  } catch {}
  return CREDENTIAL_PARAMETERS.has(name.toLowerCase().replace(/[-_\s]/g, ''));
}

/**
 * The URL as it may be logged: the value of every credential parameter in its query replaced
 * by `[redacted]`; the path and every other parameter as sent.
 */
export function redactedUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const query = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return equals !== -1 && isCredentialParameter(name) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, queryStart)}?${query}`;
}

/** What a request's log lines say of it (`req`): Fastify's fields, the URL redacted. */
export function requestLogFields(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactedUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
