/**
 * Whether an error says the database cannot be reached right now (as opposed to a statement
 * that failed): the store passes such driver errors through unchanged. The gateway answers
 * them 503 `unavailable` so clients retry; the worker waits them out.
 */

/** Socket errors of a connection that cannot be made or was cut. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  // A stopped database container's name leaves the network's DNS until it is back.
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going away or not accepting connections yet: class 08
 * (connection exception), admin_shutdown, crash_shutdown, cannot_connect_now (starting up,
 * shutting down, in recovery) and too_many_connections.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code);
}

/** node-postgres (client and pool) and PGlite messages that carry no code. */
const DRIVER_MESSAGES = [
  /^Connection terminated/, // unexpectedly, or due to connection timeout
  /^timeout exceeded when trying to connect$/,
  /^Query read timeout$/,
  /is not queryable$/, // a client that had a connection error, or was closed
  /^Cannot use a pool after calling end on the pool$/,
  /^PGlite is clos(ed|ing)$/,
];

function isUnreachableItself(error: object): boolean {
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  if (code !== undefined && (NETWORK_CODES.has(code) || isUnavailableSqlState(code))) return true;
  const message = 'message' in error && typeof error.message === 'string' ? error.message : '';
  return DRIVER_MESSAGES.some((pattern) => pattern.test(message));
}

/** True when `error`, its causes or (an AggregateError's) member errors say the database is unreachable. */
export function isDatabaseUnreachable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  if (isUnreachableItself(error)) return true;
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.every((member) => isDatabaseUnreachable(member, depth + 1));
  }
  return 'cause' in error && isDatabaseUnreachable(error.cause, depth + 1);
}
