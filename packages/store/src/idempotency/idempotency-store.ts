import { z } from 'zod';
import { IdSchema, noNul, parse, TenantIdSchema } from '../input';
import { retryOnceWhenEmpty } from '../retry-once-when-empty';
import type { RunStatement } from '../sql-client';

/** What the first request with an idempotency key asked for and, once it succeeded, its answer. */
export interface IdempotencyRecord {
  /** A digest of the first request's body; another body with the same key is refused. */
  requestHash: string;
  /** The first request's answer, null until it succeeded (a retry then runs it again). */
  response: { status: number; body: unknown } | null;
}

/** Where an idempotency key is used: per tenant, per scope (the method and path it was sent to). */
export interface IdempotencyKeyName {
  tenantId: string;
  scope: string;
  key: string;
}

/** Idempotency keys of requests (docs/architecture.md, "HTTP API"). */
export interface IdempotencyStore {
  /**
   * Claims a key for a request: null when this call claimed it, else the record of the request
   * that did. A key claimed with a tabId is forgotten when that tab is deleted.
   */
  claimIdempotencyKey(
    input: IdempotencyKeyName & { requestHash: string; tabId?: string },
  ): Promise<IdempotencyRecord | null>;
  /** Stores the answer of a claimed key's request, for its replays. */
  completeIdempotencyKey(
    input: IdempotencyKeyName & { status: number; body: unknown },
  ): Promise<void>;
}

const KeyNameSchema = z.object({
  tenantId: TenantIdSchema,
  scope: z.string().min(1).max(500),
  key: z.string().min(1).max(1000).refine(noNul, 'key must not contain NUL (\\u0000)'),
});

const ClaimSchema = KeyNameSchema.extend({
  requestHash: z.string().min(1).max(200),
  tabId: IdSchema.optional(),
}).strict();

const CompleteSchema = KeyNameSchema.extend({
  status: z.number().int().min(100).max(599),
  body: z.unknown(),
}).strict();

interface ClaimRow extends Record<string, unknown> {
  claimed: boolean;
  request_hash: string;
  response_status: number | null;
  response_body: unknown;
}

export function createSqlIdempotencyStore(run: RunStatement): IdempotencyStore {
  return {
    async claimIdempotencyKey(input) {
      const { tenantId, scope, key, requestHash, tabId } = parse(ClaimSchema, input, 'key');
      const rows = await retryOnceWhenEmpty(() =>
        run<ClaimRow>(
          'claim idempotency key',
          `WITH inserted AS (
             INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, tab_id)
             VALUES ($1, $2, $3, $4, $5::uuid)
             ON CONFLICT DO NOTHING RETURNING request_hash
           )
           SELECT true AS claimed, request_hash, NULL::integer AS response_status,
             NULL::jsonb AS response_body
           FROM inserted
           UNION ALL
           SELECT false, request_hash, response_status, response_body FROM idempotency_keys
           WHERE tenant_id = $1 AND scope = $2 AND key = $3
           LIMIT 1`,
          [tenantId, scope, key, requestHash, tabId ?? null],
        ),
      );
      const row = rows[0];
      if (row === undefined) throw new Error(`idempotency key ${key} neither claimed nor found`);
      if (row.claimed) return null;
      return {
        requestHash: row.request_hash,
        response:
          row.response_status === null
            ? null
            : { status: Number(row.response_status), body: row.response_body },
      };
    },

    async completeIdempotencyKey(input) {
      const { tenantId, scope, key, status, body } = parse(CompleteSchema, input, 'answer');
      await run(
        'complete idempotency key',
        `UPDATE idempotency_keys SET response_status = $4, response_body = $5::jsonb
         WHERE tenant_id = $1 AND scope = $2 AND key = $3`,
        [tenantId, scope, key, status, JSON.stringify(body ?? null)],
      );
    },
  };
}
