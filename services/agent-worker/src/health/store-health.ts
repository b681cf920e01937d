import { ChunklogError } from '@chunklog/chunk-core';

/** Socket errors of a server that is down, restarting or out of reach. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that cannot answer now: class 08 (connection exception), the admin,
 * crash and start-up shutdowns (57P01..57P03), and too many connections.
 */
function isUnavailableState(code: string): boolean {
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code);
}

/** What node-postgres says when the connection dies under a query or cannot be made in time. */
const CONNECTION_LOST =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i;

/**
 * True when a store call failed because the database could not be reached (down, restarting,
 * the network), so the same call may succeed later; false for answers (not found, conflict,
 * invalid input) and bugs, which waiting does not change.
 */
export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (error instanceof ChunklogError || depth > 5) return false;
  if (
    error instanceof AggregateError &&
    error.errors.some((e) => isStoreUnavailable(e, depth + 1))
  ) {
    return true;
  }
  if (typeof error !== 'object' || error === null) return false;
  const code = 'code' in error ? error.code : undefined;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableState(code))) {
    return true;
  }
  if (error instanceof Error && CONNECTION_LOST.test(error.message)) return true;
  return 'cause' in error && isStoreUnavailable(error.cause, depth + 1);
}

/** Whether the worker's store answered lately, for its health and readiness endpoints. */
export class StoreHealth {
  private unreachableSince: number | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  /** Records the outcome of a store call: only reachability counts, not the call's answer. */
  report(error?: unknown): void {
    if (error !== undefined && isStoreUnavailable(error)) this.unreachableSince ??= this.now();
    else this.unreachableSince = null;
  }

  get reachable(): boolean {
    return this.unreachableSince === null;
  }

  /** `{ store: 'reachable' }`, or `'unreachable'` with the time it has been so. */
  snapshot(): { store: 'reachable' | 'unreachable'; unreachableForMs?: number } {
    if (this.unreachableSince === null) return { store: 'reachable' };
    return { store: 'unreachable', unreachableForMs: this.now() - this.unreachableSince };
  }
}
