import type { WebhookEvent } from '@chunklog/chunk-core';
import { z } from 'zod';
import { IdSchema, parse } from '../input';
import type { RunStatement } from '../sql-client';
import { webhookMessageId } from './webhook-rows';

/** A delivery a dispatcher claimed: what to send, where, and with which secret. */
export interface ClaimedWebhookDelivery {
  id: string;
  /** The `webhook-id` header. */
  messageId: string;
  url: string;
  secret: string;
  event: WebhookEvent;
  /** This attempt's number (1 for the first); recordWebhookAttempt names it. */
  attempt: number;
}

/** How one attempt went: delivered (a 2xx), or a failure to retry later. */
export type WebhookAttemptResult =
  | { delivered: true; statusCode: number }
  | {
      delivered: false;
      /** The answer's status; null when there was none (timeout, refused connection). */
      statusCode: number | null;
      error: string;
      /** When to try again; past `maxAgeMs` after the event the delivery fails for good. */
      retryInMs: number;
      maxAgeMs: number;
    };

/** The dispatcher's side of the webhook outbox (docs/architecture.md, "Webhooks"). */
export interface WebhookOutbox {
  /**
   * Claims up to `limit` due deliveries: each one's next attempt moves `leaseMs` ahead, so no
   * other dispatcher takes it while this attempt runs, and a dispatcher that dies mid-attempt
   * leaves it due again once that time has passed.
   */
  claimWebhookDeliveries(input: {
    limit: number;
    leaseMs: number;
  }): Promise<ClaimedWebhookDelivery[]>;
  /**
   * Records an attempt's result; false (nothing written) when the delivery is gone, done, or
   * was claimed again since (this attempt's lease lapsed).
   */
  recordWebhookAttempt(
    deliveryId: string,
    input: { attempt: number; result: WebhookAttemptResult },
  ): Promise<boolean>;
  /**
   * Deletes up to `limit` finished deliveries (delivered or failed) made more than `olderThanMs`
   * ago, the oldest first; returns how many it deleted. Pending ones are never deleted.
   */
  pruneWebhookDeliveries(input: { olderThanMs: number; limit: number }): Promise<number>;
}

const ClaimSchema = z
  .object({
    limit: z.number().int().min(1).max(1000),
    leaseMs: z.number().int().min(1).max(86_400_000),
  })
  .strict();
const maxDuration = z
  .number()
  .int()
  .min(0)
  .max(366 * 86_400_000);
const RecordSchema = z
  .object({
    attempt: z.number().int().min(1),
    result: z.discriminatedUnion('delivered', [
      z.object({ delivered: z.literal(true), statusCode: z.number().int() }),
      z.object({
        delivered: z.literal(false),
        statusCode: z.number().int().nullable(),
        error: z.string(),
        retryInMs: maxDuration,
        maxAgeMs: maxDuration,
      }),
    ]),
  })
  .strict();

const PruneSchema = z
  .object({ olderThanMs: maxDuration, limit: z.number().int().min(1).max(100_000) })
  .strict();

interface ClaimRow extends Record<string, unknown> {
  id: string;
  event_id: string;
  url: string;
  secret: string;
  payload: WebhookEvent;
  attempts: number;
}

/** Errors are kept short: a receiver's whole error page is not history worth storing. */
const maxErrorLength = 500;

export function createSqlWebhookOutbox(run: RunStatement): WebhookOutbox {
  return {
    async claimWebhookDeliveries(input) {
      const { limit, leaseMs } = parse(ClaimSchema, input, 'webhook claim');
      // SKIP LOCKED: concurrent dispatchers split the due rows instead of queueing on them. A
      // row another dispatcher claimed and committed meanwhile is re-checked against the WHERE
      // on its new version, whose next attempt is in the future, and left alone.
      const rows = await run<ClaimRow>(
        'claim webhook deliveries',
        `WITH due AS (
           SELECT x.id FROM webhook_deliveries x
           WHERE x.status = 'pending' AND x.next_attempt_at <= now()
           ORDER BY x.next_attempt_at LIMIT $1
           FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries d
         SET attempts = d.attempts + 1, last_attempt_at = now(),
           next_attempt_at = now() + $2 * interval '1 millisecond'
         FROM due, webhook_endpoints e
         WHERE d.id = due.id AND e.id = d.endpoint_id
         RETURNING d.id, d.event_id, d.payload, d.attempts, e.url, e.secret`,
        [limit, leaseMs],
      );
      return rows.map((row) => ({
        id: row.id,
        messageId: webhookMessageId(row.event_id),
        url: row.url,
        secret: row.secret,
        event: row.payload,
        attempt: row.attempts,
      }));
    },

    async recordWebhookAttempt(deliveryId, input) {
      const id = parse(IdSchema, deliveryId, 'delivery id');
      const { attempt, result } = parse(RecordSchema, input, 'webhook attempt');
      const failure = result.delivered ? null : result;
      const rows = await run(
        'record webhook attempt',
        `WITH outcome AS (
           SELECT CASE
             WHEN $3 THEN 'delivered'
             WHEN d.created_at + $7 * interval '1 millisecond'
               < now() + $6 * interval '1 millisecond' THEN 'failed'
             ELSE 'pending' END AS status
           FROM webhook_deliveries d WHERE d.id = $1
         )
         UPDATE webhook_deliveries d
         SET status = outcome.status, last_status_code = $4, last_error = $5,
           delivered_at = CASE WHEN outcome.status = 'delivered' THEN now() END,
           next_attempt_at = CASE WHEN outcome.status = 'pending'
             THEN now() + $6 * interval '1 millisecond' END
         FROM outcome
         WHERE d.id = $1 AND d.attempts = $2 AND d.status = 'pending'
         RETURNING d.id`,
        [
          id,
          attempt,
          result.delivered,
          result.statusCode,
          failure === null ? null : failure.error.slice(0, maxErrorLength),
          failure?.retryInMs ?? 0,
          failure?.maxAgeMs ?? 0,
        ],
      );
      return rows.length > 0;
    },

    async pruneWebhookDeliveries(input) {
      const { olderThanMs, limit } = parse(PruneSchema, input, 'webhook prune');
      // SKIP LOCKED: dispatchers pruning at once delete disjoint rows instead of waiting.
      const rows = await run(
        'prune webhook deliveries',
        `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT x.id FROM webhook_deliveries x
           WHERE x.status <> 'pending' AND x.created_at < now() - $1 * interval '1 millisecond'
           ORDER BY x.created_at LIMIT $2
           FOR UPDATE SKIP LOCKED
         ) RETURNING id`,
        [olderThanMs, limit],
      );
      return rows.length;
    },
  };
}
