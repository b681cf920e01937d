import {
  ConflictError,
  DomainError,
  domainErrorCodes,
  IdempotencyKeyReusedError,
  InvalidInputError,
  NotFoundError,
} from '@chunklog/chunk-core';
import { z } from 'zod';
import { RemoteHandlerError } from './bus-errors';

/** What a failed handler sends back instead of a reply value (both adapters use this shape). */
export const RemoteErrorSchema = z.object({
  code: z.enum(domainErrorCodes),
  message: z.string(),
});
export type RemoteError = z.infer<typeof RemoteErrorSchema>;

/** Describes a handler's failure for the requester; unknown errors become 'unavailable'. */
export function toRemoteError(error: unknown): RemoteError {
  if (error instanceof DomainError) return { code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'unavailable', message };
}

/**
 * Rebuilds a handler's failure on the requester's side, as the same named class where there is
 * one, so `instanceof NotFoundError` works the same across the bus as within one process.
 */
export function fromRemoteError(remote: RemoteError, subject: string): DomainError {
  const message = `${subject}: ${remote.message}`;
  switch (remote.code) {
    case 'not_found':
      return new NotFoundError(message);
    case 'conflict':
      return new ConflictError(message);
    case 'invalid_input':
      return new InvalidInputError(message);
    case 'idempotency_key_reused':
      return new IdempotencyKeyReusedError(message);
    case 'unauthorized':
    case 'rate_limited':
    case 'unavailable':
      return new RemoteHandlerError(remote.code, message);
    default: {
      const unreachable: never = remote.code;
      throw new Error(`unknown error code ${String(unreachable)}`);
    }
  }
}
