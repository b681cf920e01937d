import { IdempotencyKeyReusedError } from '@chunklog/chunk-core';
import type { IdempotencyStore } from '@chunklog/store';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { z } from 'zod';
import { requestHash } from './request-hash';

/** The header that marks an answer as the stored answer of an earlier request with the key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** A request sent with an Idempotency-Key, once its key is claimed or found. */
export interface IdempotentRequest<Answer> {
  /**
   * The answer body of an earlier request with this key and the same body, which succeeded:
   * send it again (with sendReplay) instead of running the request.
   */
  readonly storedAnswer: Answer | null;
  /** Stores this request's successful answer for its replays. */
  complete(answer: Answer): Promise<void>;
}

/**
 * Claims the request's Idempotency-Key within its tenant and scope (the method and path). An
 * earlier request with the key and another body throws IdempotencyKeyReusedError (422): nothing
 * is done. One with the same body that succeeded gives its stored answer; one that has not (it
 * failed, was refused, or is still running) lets this request run again, which the routes make
 * safe by deriving what they create from the key.
 */
export async function beginIdempotentRequest<Answer>(
  store: IdempotencyStore,
  logger: FastifyBaseLogger,
  input: {
    tenantId: string;
    scope: string;
    /** The request's Idempotency-Key; without one the request just runs. */
    key: string | undefined;
    /** The parsed request body, defaults applied: what a replay must match. */
    body: unknown;
    /** The route's success status and answer schema (stored answers are read back through it). */
    success: { status: number; schema: z.ZodType<Answer> };
    tabId?: string;
  },
): Promise<IdempotentRequest<Answer>> {
  if (input.key === undefined) return { storedAnswer: null, complete: async () => {} };
  const name = { tenantId: input.tenantId, scope: input.scope, key: input.key };
  const hash = requestHash(input.body);
  const earlier = await store.claimIdempotencyKey({
    ...name,
    requestHash: hash,
    ...(input.tabId === undefined ? {} : { tabId: input.tabId }),
  });
  if (earlier !== null && earlier.requestHash !== hash) {
    throw new IdempotencyKeyReusedError(
      `Idempotency-Key ${JSON.stringify(input.key)} was used with another request body: send a new key for a new request`,
    );
  }
  const stored = earlier?.response ?? null;
  return {
    storedAnswer: stored === null ? null : input.success.schema.parse(stored.body),
    async complete(answer) {
      try {
        await store.completeIdempotencyKey({ ...name, status: input.success.status, body: answer });
      } catch (error) {
        // The request's effect is done: answering 5xx now would invite a retry, which is safe
        // anyway (it runs again, deduplicated by the key), unlike losing the success.
        logger.warn({ err: error, scope: input.scope }, 'idempotent answer not stored');
      }
    },
  };
}

/** Answers a request with the stored answer of an earlier one with its key, marked as a replay. */
export function sendReplay(reply: FastifyReply, status: number, answer: unknown): FastifyReply {
  return reply.code(status).header(IDEMPOTENT_REPLAYED_HEADER, 'true').send(answer);
}
