import {
  NotFoundError,
  type WebhookDelivery,
  type WebhookEndpoint,
  WebhookEventTypeSchema,
} from '@chunklog/chunk-core';
import { z } from 'zod';
import { IdSchema, maxPageLimit, noNul, parse, TenantIdSchema } from '../input';
import { retryOnceWhenEmpty } from '../retry-once-when-empty';
import type { RunStatement } from '../sql-client';
import {
  type DeliveryRow,
  deliveryColumns,
  deliveryFromRow,
  type EndpointRow,
  endpointColumns,
  endpointFromRow,
} from './webhook-rows';

/** A tenant's webhook endpoints and the history of their deliveries. */
export interface WebhookStore {
  /**
   * `secret` is the signing secret the caller generated (`whsec_...`); the answer's `secret` is
   * the one the endpoint signs with. With an id, idempotent: an endpoint of that id already the
   * tenant's is returned as it stands, with its own secret (a request retried with an
   * idempotency key); one of another tenant is not found.
   */
  createWebhookEndpoint(input: {
    tenantId: string;
    url: string;
    eventTypes: string[];
    secret: string;
    id?: string;
  }): Promise<{ endpoint: WebhookEndpoint; secret: string }>;
  /** A tenant's endpoints, oldest first. */
  listWebhookEndpoints(tenantId: string): Promise<WebhookEndpoint[]>;
  /** Deletes an endpoint and its deliveries; NotFoundError when absent or another tenant's. */
  deleteWebhookEndpoint(endpointId: string, options: { tenantId: string }): Promise<void>;
  /** Replaces the signing secret; attempts from now on sign with the new one. */
  rotateWebhookSecret(
    endpointId: string,
    input: { tenantId: string; secret: string },
  ): Promise<WebhookEndpoint>;
  /** An endpoint's latest deliveries, newest first; NotFoundError as for delete. */
  listWebhookDeliveries(
    endpointId: string,
    options: { tenantId: string; limit: number },
  ): Promise<WebhookDelivery[]>;
}

/** The longest endpoint URL the store keeps. */
export const maxWebhookUrlLength = 2000;

export const WebhookUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(maxWebhookUrlLength)
  .refine(noNul, 'url must not contain NUL (\\u0000)');
export const WebhookSecretSchema = z.string().regex(/^whsec_[A-Za-z0-9+/=]{16,200}$/);
export const WebhookEventTypesSchema = z
  .array(WebhookEventTypeSchema)
  .min(1)
  .max(WebhookEventTypeSchema.options.length)
  .transform((types) => [...new Set(types)]);

const CreateEndpointSchema = z
  .object({
    tenantId: TenantIdSchema,
    url: WebhookUrlSchema,
    eventTypes: WebhookEventTypesSchema,
    secret: WebhookSecretSchema,
    id: IdSchema.optional(),
  })
  .strict();
const RotateSchema = z.object({ tenantId: TenantIdSchema, secret: WebhookSecretSchema }).strict();
const ListDeliveriesSchema = z
  .object({ tenantId: TenantIdSchema, limit: z.number().int().min(1).max(maxPageLimit) })
  .strict();

/** A malformed id cannot name a stored endpoint: it is "not found", like any unknown id. */
function requireEndpointId(endpointId: unknown): string {
  if (!IdSchema.safeParse(endpointId).success) {
    throw new NotFoundError(`webhook endpoint ${String(endpointId)} not found`);
  }
  return endpointId as string;
}

const notFound = (id: string) => new NotFoundError(`webhook endpoint ${id} not found`);

export function createSqlWebhookStore(run: RunStatement): WebhookStore {
  return {
    async createWebhookEndpoint(input) {
      const { tenantId, url, eventTypes, secret, id } = parse(
        CreateEndpointSchema,
        input,
        'webhook',
      );
      // As createTab with an id: a concurrent creator's row is invisible to this statement's
      // snapshot when the insert waited on it and did nothing; a second statement sees it.
      const rows = await retryOnceWhenEmpty(() =>
        run<EndpointRow & { secret: string }>(
          'create webhook endpoint',
          `WITH inserted AS (
             INSERT INTO webhook_endpoints AS e (id, tenant_id, url, event_types, secret)
             VALUES (coalesce($5::uuid, gen_random_uuid()), $1, $2, $3::text[], $4)
             ON CONFLICT (id) DO NOTHING RETURNING ${endpointColumns}, e.secret
           )
           SELECT * FROM inserted
           UNION ALL
           SELECT ${endpointColumns}, e.secret FROM webhook_endpoints e
           WHERE e.id = $5::uuid AND e.tenant_id = $1
           LIMIT 1`,
          [tenantId, url, eventTypes, secret, id ?? null],
        ),
      );
      const row = rows[0];
      if (row === undefined) throw notFound(id!);
      return { endpoint: endpointFromRow(row), secret: row.secret };
    },

    async listWebhookEndpoints(tenantId) {
      const tenant = parse(TenantIdSchema, tenantId, 'tenant id');
      const rows = await run<EndpointRow>(
        'list webhook endpoints',
        `SELECT ${endpointColumns} FROM webhook_endpoints e
         WHERE e.tenant_id = $1 ORDER BY e.created_at, e.id`,
        [tenant],
      );
      return rows.map(endpointFromRow);
    },

    async deleteWebhookEndpoint(endpointId, options) {
      const id = requireEndpointId(endpointId);
      const tenant = parse(TenantIdSchema, options.tenantId, 'tenant id');
      const rows = await run(
        'delete webhook endpoint',
        'DELETE FROM webhook_endpoints WHERE id = $1 AND tenant_id = $2 RETURNING id',
        [id, tenant],
      );
      if (rows.length === 0) throw notFound(id);
    },

    async rotateWebhookSecret(endpointId, input) {
      const id = requireEndpointId(endpointId);
      const { tenantId, secret } = parse(RotateSchema, input, 'webhook secret rotation');
      const rows = await run<EndpointRow>(
        'rotate webhook secret',
        `UPDATE webhook_endpoints AS e SET secret = $3, secret_set_at = now()
         WHERE e.id = $1 AND e.tenant_id = $2 RETURNING ${endpointColumns}`,
        [id, tenantId, secret],
      );
      const row = rows[0];
      if (row === undefined) throw notFound(id);
      return endpointFromRow(row);
    },

    async listWebhookDeliveries(endpointId, options) {
      const id = requireEndpointId(endpointId);
      const { tenantId, limit } = parse(ListDeliveriesSchema, options, 'delivery listing');
      // The endpoint row tells an empty history from an unknown (or foreign) endpoint.
      const rows = await run<DeliveryRow & { found: boolean }>(
        'list webhook deliveries',
        `SELECT ${deliveryColumns}
         FROM webhook_endpoints e
         LEFT JOIN LATERAL (
           SELECT * FROM webhook_deliveries x WHERE x.endpoint_id = e.id
           ORDER BY x.created_at DESC, x.id LIMIT $3
         ) d ON true
         WHERE e.id = $1 AND e.tenant_id = $2
         ORDER BY d.created_at DESC, d.id`,
        [id, tenantId, limit],
      );
      if (rows.length === 0) throw notFound(id);
      return rows.filter((row) => row.id !== null).map(deliveryFromRow);
    },
  };
}
