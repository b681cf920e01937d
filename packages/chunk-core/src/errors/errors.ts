/**
 * Every error code the API answers with, and its HTTP status: the one table the gateway answers
 * by and the client reads answers by. Each status has one code.
 */
export const errorStatuses = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  upgrade_required: 426,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

/** A code of `errorStatuses`. */
export type ApiErrorCode = keyof typeof errorStatuses;

/** The code of an HTTP error status, when the table has one. */
export function errorCodeOfStatus(status: number): ApiErrorCode | undefined {
  return codeByStatus.get(status);
}

const codeByStatus = new Map(
  Object.entries(errorStatuses).map(([code, status]) => [status as number, code as ApiErrorCode]),
);

/**
 * The codes the domain raises as `DomainError` (the others are the HTTP layer's own), which
 * also cross the bus from a handler to its requester.
 */
export const domainErrorCodes = [
  'not_found',
  'conflict',
  'invalid_input',
  'unauthorized',
  'rate_limited',
  'unavailable',
  'idempotency_key_reused',
] as const satisfies readonly ApiErrorCode[];

/** Error codes every layer shares. */
export type DomainErrorCode = (typeof domainErrorCodes)[number];

/**
 * Base class of the services' named errors, by a code of the table above (the client reports
 * failures with its own ChunklogError, built from the same table).
 */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DomainError';
  }
}

/** The thing asked for does not exist (or belongs to another tenant). */
export class NotFoundError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('not_found', message, options);
    this.name = 'NotFoundError';
  }
}

/** The request clashes with the current state (stale expected seq, turn running, ...). */
export class ConflictError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('conflict', message, options);
    this.name = 'ConflictError';
  }
}

/** The input is malformed, too large or of the wrong type; nothing was written. */
export class InvalidInputError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_input', message, options);
    this.name = 'InvalidInputError';
  }
}

/** An idempotency key sent again with another request body; nothing was done. */
export class IdempotencyKeyReusedError extends DomainError {
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
