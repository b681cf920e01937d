/** Error codes every layer shares; the gateway maps them to HTTP statuses in one place. */
export type ChunklogErrorCode =
  | 'not_found'
  | 'conflict'
  | 'invalid_input'
  | 'unauthorized'
  | 'rate_limited'
  | 'unavailable'
  | 'idempotency_key_reused';

/** Base class of chunklog's named errors. */
export class ChunklogError extends Error {
  constructor(
    readonly code: ChunklogErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ChunklogError';
  }
}

/** The thing asked for does not exist (or belongs to another tenant). */
export class NotFoundError extends ChunklogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('not_found', message, options);
    this.name = 'NotFoundError';
  }
}

/** The request clashes with the current state (stale expected seq, turn running, ...). */
export class ConflictError extends ChunklogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('conflict', message, options);
    this.name = 'ConflictError';
  }
}

/** The input is malformed, too large or of the wrong type; nothing was written. */
export class InvalidInputError extends ChunklogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_input', message, options);
    this.name = 'InvalidInputError';
  }
}

/** An idempotency key sent again with another request body; nothing was done. */
export class IdempotencyKeyReusedError extends ChunklogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('idempotency_key_reused', message, options);
    this.name = 'IdempotencyKeyReusedError';
  }
}

/**
 * One line for any thrown value: the message, with its cause's when that adds something (a
 * NATS "connection refused (connect ECONNREFUSED …)"). Node's dual-stack connect fails with an
 * AggregateError whose own message is empty: its first error stands in.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = error instanceof AggregateError ? error.errors[0] : error.cause;
  const detail = inner instanceof Error ? inner.message : '';
  const code = (error as { code?: unknown }).code;
  const message = error.message || (typeof code === 'string' ? code : '') || error.name;
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}
