import type {
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEventType,
} from '@chunklog/chunk-core';

/** The select list of endpoint reads (table alias e); times leave the database as epoch ms. */
export const endpointColumns = `e.id, e.url, e.event_types,
  floor(extract(epoch FROM e.created_at) * 1000)::double precision AS created_at_ms,
  floor(extract(epoch FROM e.secret_set_at) * 1000)::double precision AS secret_set_at_ms`;

export interface EndpointRow extends Record<string, unknown> {
  id: string;
  url: string;
  event_types: WebhookEventType[];
  created_at_ms: number;
  secret_set_at_ms: number;
}

export function endpointFromRow(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    createdAt: row.created_at_ms,
    secretSetAt: row.secret_set_at_ms,
  };
}

const epochMs = (column: string) =>
  `floor(extract(epoch FROM d.${column}) * 1000)::double precision AS ${column}_ms`;

/** The select list of delivery reads (table alias d). */
export const deliveryColumns = `d.id, d.event_id, d.event_type, d.status, d.attempts,
  d.payload->'data'->>'tabId' AS tab_id, d.payload->'data'->>'turnId' AS turn_id,
  d.last_status_code, d.last_error, ${epochMs('last_attempt_at')}, ${epochMs('next_attempt_at')},
  ${epochMs('delivered_at')}, ${epochMs('created_at')}`;

export interface DeliveryRow extends Record<string, unknown> {
  id: string;
  event_id: string;
  event_type: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  tab_id: string;
  turn_id: string;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at_ms: number | null;
  next_attempt_at_ms: number | null;
  delivered_at_ms: number | null;
  created_at_ms: number;
}

/** The `webhook-id` of an event: Standard Webhooks ids are opaque strings, ours `msg_<hex>`. */
export function webhookMessageId(eventId: string): string {
  return `msg_${eventId.replaceAll('-', '')}`;
}

export function deliveryFromRow(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    messageId: webhookMessageId(row.event_id),
    eventType: row.event_type,
    tabId: row.tab_id,
    turnId: row.turn_id,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at_ms,
    nextAttemptAt: row.next_attempt_at_ms,
    deliveredAt: row.delivered_at_ms,
    createdAt: row.created_at_ms,
  };
}
