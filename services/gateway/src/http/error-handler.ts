import {
  type ApiErrorCode,
  DomainError,
  errorCodeOfStatus,
  errorStatuses,
  isDatabaseUnreachable,
} from '@chunklog/chunk-core';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ErrorResponse } from './api-schemas';
import { redactedUrl } from './redacted-url';

/** What a 503 asks clients to wait before retrying (`Retry-After`, seconds). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

export interface HttpErrorAnswer {
  status: number;
  code: ApiErrorCode;
  message: string;
  /** Headers the answer needs besides its body (`Retry-After` on 503). */
  headers: Record<string, string>;
}

/** Maps any thrown value to the HTTP answer; the one place where errors meet status codes. */
export function toHttpError(error: unknown): HttpErrorAnswer {
  if (error instanceof DomainError) {
    return answer(errorStatuses[error.code], error.code, error.message);
  }
  if (isDatabaseUnreachable(error)) {
    return answer(503, 'unavailable', 'the database is unreachable, retry later');
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const issues = error.validation
      .map((issue) => `${issue.instancePath || '/'} ${issue.message ?? 'is invalid'}`)
      .join('; ');
    return answer(400, 'invalid_input', `${error.validationContext ?? 'request'}: ${issues}`);
  }
  const candidate = error as Partial<FastifyError> | null;
  const status = typeof candidate?.statusCode === 'number' ? candidate.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Fastify's own client errors (bad JSON, body too large, rate limit, ...) keep their status.
    return answer(
      status,
      errorCodeOfStatus(status) ?? 'invalid_input',
      candidate?.message ?? 'bad request',
    );
  }
  if (status === 503) return answer(503, 'unavailable', 'service unavailable');
  // 5xx details may leak internals: they are logged, never sent.
  return answer(500, 'internal', 'internal error');
}

/** An error answer with the headers its status needs. */
export function answer(status: number, code: ApiErrorCode, message: string): HttpErrorAnswer {
  const headers: Record<string, string> =
    status === 503 ? { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } : {};
  return { status, code, message, headers };
}

/** The error body every error answer has: the request id lets a client's report find the log. */
export function errorBody(code: string, message: string, requestId: string): ErrorResponse {
  return { error: { code, message, requestId } };
}

/** Sends an error answer with its headers and body. */
export function sendError(
  reply: FastifyReply,
  { status, code, message, headers }: HttpErrorAnswer,
) {
  return reply
    .code(status)
    .headers(headers)
    .send(errorBody(code, message, reply.request.id));
}

/** Installs the error and not-found handlers that answer `{ error: { code, message, requestId } }`. */
export const errorHandlerPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error, request, reply) => {
      const failure = toHttpError(error);
      // Under `err`, pino's error serializer logs the stack and every cause.
      if (failure.status === 503) request.log.warn({ err: error }, 'unavailable');
      else if (failure.status >= 500) request.log.error({ err: error }, 'request failed');
      else request.log.info({ code: failure.code, message: failure.message }, 'rejected');
      return sendError(reply, failure);
    });
    app.setNotFoundHandler((request, reply) =>
      sendError(
        reply,
        answer(404, 'not_found', `no route ${request.method} ${redactedUrl(request.url)}`),
      ),
    );
  },
  { name: 'chunklog-error-handler' },
);
