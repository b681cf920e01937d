import { type DomainErrorCode, errorCodeOfStatus } from '@chunklog/chunk-core';

/**
 * What went wrong, as the API's `code` says it (`not_found`, `conflict`, `invalid_input`,
 * `unauthorized`, `rate_limited`, `unavailable`, `idempotency_key_reused`, `payload_too_large`,
 * `internal`, ...), or `network` when no answer came at all and `invalid_response` when the
 * answer could not be read.
 */
export type ApiErrorCode = DomainErrorCode | 'network' | 'invalid_response' | (string & {});

/** Every failure the client reports: the API's error code and the HTTP status (0: no answer). */
export class ChunklogError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    readonly status: number,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number; requestId?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ChunklogError';
    this.retryAfterMs = options?.retryAfterMs ?? null;
    this.requestId = options?.requestId ?? null;
  }

  /** The server's `Retry-After`, in ms, when it sent one. */
  readonly retryAfterMs: number | null;

  /** The id the gateway logged the request under (`x-request-id`): quote it in a report. */
  readonly requestId: string | null;

  /** True when trying again later may succeed (no answer, 429, 5xx). */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** The error of a non-2xx response: its `{ error: { code, message } }` body when it has one. */
export async function errorFromResponse(response: Response): Promise<ChunklogError> {
  let code: ApiErrorCode =
    errorCodeOfStatus(response.status) ?? (response.status >= 500 ? 'internal' : 'http_error');
  let message = `HTTP ${response.status}`;
  let requestId = response.headers.get('x-request-id');
  try {
    const body = (await response.json()) as {
      error?: { code?: unknown; message?: unknown; requestId?: unknown };
    };
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (typeof body.error?.requestId === 'string') requestId = body.error.requestId;
  } catch {
    // Not the API's JSON (a proxy's page): the status says enough.
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  return new ChunklogError(code, response.status, message, {
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    ...(requestId ? { requestId } : {}),
  });
}

/** Any thrown value as a ChunklogError (a failed fetch becomes `network`, status 0). */
export function toChunklogError(error: unknown): ChunklogError {
  if (error instanceof ChunklogError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ChunklogError('network', 0, message, { cause: error });
}

/** True for the rejection of an aborted fetch or wait. */
export function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
