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

/** A decision on a tool call that waited for a person, as the API records it. */
export interface ApprovalDecision {
  callId: string;
  decision: 'approve' | 'deny';
  /** Approved with edited input: what the tool runs with instead of the model's input. */
  input?: Record<string, unknown>;
  /** Why it was denied. */
  reason?: string;
  /** The API key (or `local`, `system`) that decided. */
  decidedBy: string;
  /** Epoch ms. */
  decidedAt: number;
}

/**
 * A 409 of `POST /v1/tabs/:tabId/approvals` because a call was decided already: `decisions`
 * holds the first decision on each such call (the one that counts).
 */
export class ApprovalConflictError extends ChunklogError {
  constructor(
    message: string,
    readonly decisions: ApprovalDecision[],
    options?: { requestId?: string },
  ) {
    super('conflict', 409, message, options);
    this.name = 'ApprovalConflictError';
  }
}

/** The error of a non-2xx response: its `{ error: { code, message } }` body when it has one. */
export async function errorFromResponse(response: Response): Promise<ChunklogError> {
  let code: ApiErrorCode =
    errorCodeOfStatus(response.status) ?? (response.status >= 500 ? 'internal' : 'http_error');
  let message = `HTTP ${response.status}`;
  let requestId = response.headers.get('x-request-id');
  let decisions: ApprovalDecision[] | null = null;
  try {
    const body = (await response.json()) as {
      error?: { code?: unknown; message?: unknown; requestId?: unknown };
      decisions?: unknown;
    };
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (typeof body.error?.requestId === 'string') requestId = body.error.requestId;
    if (response.status === 409) decisions = decisionsOf(body.decisions);
  } catch {
    // Not the API's JSON (a proxy's page): the status says enough.
  }
  if (decisions !== null) {
    return new ApprovalConflictError(message, decisions, requestId ? { requestId } : undefined);
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  return new ChunklogError(code, response.status, message, {
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    ...(requestId ? { requestId } : {}),
  });
}

/**
 * The `decisions` of a 409 body when every one has the shape the API documents, else null (the
 * client stays free of zod, which would weigh on every browser bundle: the check is by hand).
 */
export function decisionsOf(value: unknown): ApprovalDecision[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const decisions: ApprovalDecision[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) return null;
    const entry = item as Record<string, unknown>;
    const { callId, decision, input, reason, decidedBy, decidedAt } = entry;
    if (typeof callId !== 'string' || (decision !== 'approve' && decision !== 'deny')) return null;
    if (typeof decidedBy !== 'string' || typeof decidedAt !== 'number') return null;
    if (
      input !== undefined &&
      (typeof input !== 'object' || input === null || Array.isArray(input))
    )
      return null;
    if (reason !== undefined && typeof reason !== 'string') return null;
    decisions.push({
      callId,
      decision,
      ...(input === undefined ? {} : { input: input as Record<string, unknown> }),
      ...(reason === undefined ? {} : { reason }),
      decidedBy,
      decidedAt,
    });
  }
  return decisions;
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
