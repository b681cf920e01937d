import { ConflictError, DomainError, InvalidInputError, NotFoundError } from '@chunklog/chunk-core';

/** SQLSTATE codes raised by the chunklog_* functions (drizzle/0000_baseline.sql). */
const TAB_NOT_FOUND = 'CL404';
const CONFLICT = 'CL409';

export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/**
 * Turns a driver error into chunklog's named errors, so callers (the gateway's one error
 * handler) never see a raw pg error for something the caller did. Anything else (connection
 * lost, server bug) is rethrown unchanged: it is a 5xx, not the caller's fault.
 */
export function mapDatabaseError(error: unknown, subject: string): Error {
  if (error instanceof DomainError) return error;
  const code = sqlState(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === undefined) return error instanceof Error ? error : new Error(message);
  if (code === TAB_NOT_FOUND) return new NotFoundError(`${subject}: ${message}`, { cause: error });
  if (code === CONFLICT) return new ConflictError(`${subject}: ${message}`, { cause: error });
  // foreign_key_violation: the tab, tenant or parent referred to does not exist (or was just deleted).
  if (code === '23503') return new NotFoundError(`${subject}: not found`, { cause: error });
  if (code === '23505') return new ConflictError(`${subject}: already exists`, { cause: error });
  // check_violation, not_null_violation and class 22 (data exceptions: bad uuid, \u0000 in
  // jsonb, out-of-range numbers) are the caller's input.
  if (code === '23514' || code === '23502' || code.startsWith('22')) {
    return new InvalidInputError(`${subject}: ${message}`, { cause: error });
  }
  return error instanceof Error ? error : new Error(message);
}
