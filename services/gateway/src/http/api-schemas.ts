import {
  CacheMissSchema,
  ChunkPageSchema,
  ChunkRoleSchema,
  ChunkTypeSchema,
  MessageModeSchema,
  maxSearchLimit,
  maxSearchQueryLength,
  TabConfigSchema,
  TabSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
} from '@chunklog/chunk-core';
import { WebhookEventTypesSchema, WebhookUrlSchema } from '@chunklog/store/webhooks';
import { z } from 'zod';

/** Largest page a client may ask for (docs/architecture.md, "HTTP API"). */
export const MAX_PAGE_LIMIT = 500;
export const DEFAULT_PAGE_LIMIT = 50;

/** The one error shape every 4xx/5xx answer has (contract). */
export const ErrorResponseSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    requestId: z
      .string()
      .describe("the request's id, also in the x-request-id header and on the gateway's log lines"),
  }),
});
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;

export const TabIdParamsSchema = z.object({ tabId: z.uuid() });

const pageLimit = z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT);

export const CreateTabBodySchema = z
  .object({ title: z.string().max(500).optional(), config: TabConfigSchema.optional() })
  .strict()
  // No body at all is a tab with defaults.
  .nullish();

export const RenameTabBodySchema = z.object({ title: z.string().max(500) }).strict();

export const ListTabsQuerySchema = z.object({
  limit: pageLimit,
  cursor: z.string().min(1).max(500).optional(),
});

export const TabResponseSchema = z.object({ tab: TabSchema });
export const TabListResponseSchema = z.object({
  tabs: z.array(TabSchema),
  nextCursor: z.string().nullable(),
});

/** Built per gateway because the text limit is configurable. */
export function createMessageBodySchema(maxTextLength: number) {
  return z
    .object({
      text: z
        .string()
        .min(1)
        .max(maxTextLength)
        // Postgres text cannot hold NUL: accepted, such a message could never be stored.
        .refine((text) => !text.includes('\u0000'), 'text must not contain NUL (\\u0000)')
        // The API refuses whitespace-only text: the model would see a placeholder, not a message.
        .refine((text) => text.trim() !== '', 'text must not be only whitespace'),
      mode: MessageModeSchema.default('interrupt'),
    })
    .strict();
}

/**
 * The Idempotency-Key of a create (POST /v1/tabs, a message): a retry with the same key and body
 * gets the first answer again, with `Idempotent-Replayed: true`; the key with another body, 422
 * `idempotency_key_reused`.
 */
export const IdempotencyHeadersSchema = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(256)
    .describe(
      'a client-chosen key (a UUID): a retry with the same key and body gets the first answer again, marked Idempotent-Replayed: true; the same key with another body answers 422 idempotency_key_reused',
    )
    .optional(),
});

export const MessageAcceptedSchema = z.object({ chunkId: z.uuid() });

/** `POST /compact`'s body: optional, as is each field. */
export const CompactBodySchema = z
  .object({
    instructions: z
      .string()
      .max(20_000)
      .refine((text) => text.trim().length > 0, 'instructions must not be blank')
      .optional()
      .describe("replaces the summarization prompt for this compaction (the tab's own otherwise)"),
  })
  .strict()
  // No body at all compacts with the tab's settings.
  .nullish();

export const CompactAcceptedSchema = z.object({
  chunkId: z
    .uuid()
    .describe(
      'the id the compaction chunk will have, if there is anything new to summarize; with an Idempotency-Key, the same for every replay',
    ),
});

export const ChunksQuerySchema = z
  .object({
    limit: pageLimit,
    before: z.coerce.number().int().min(1).optional(),
    after: z.coerce.number().int().min(0).optional(),
    around: z.coerce
      .number()
      .int()
      .min(1)
      .optional()
      .describe('the page centred on this seq (a search hit), the chunk itself included'),
  })
  .refine(
    (query) =>
      [query.before, query.after, query.around].filter((bound) => bound !== undefined).length <= 1,
    { message: 'before, after and around are exclusive' },
  );

/** A page of chunks; read around a seq, it also tells whether more lie before and after it. */
export const ChunkPageResponseSchema = ChunkPageSchema.extend({
  hasMoreBefore: z.boolean().optional().describe('with around: more chunks lie before the page'),
  hasMoreAfter: z.boolean().optional().describe('with around: more chunks lie after the page'),
});

/** GET /v1/search: the query, its filters and the page. */
export const SearchQuerySchema = z
  .object({
    q: z
      .string()
      .trim()
      .min(1, 'the query is empty')
      .max(maxSearchQueryLength, `the query is longer than ${maxSearchQueryLength} characters`)
      .describe(
        'websearch_to_tsquery syntax: words (all must match), "a phrase", `or`, `-word` to exclude',
      ),
    tabId: z.uuid().optional().describe("only this tab's chunks and title"),
    role: ChunkRoleSchema.optional().describe('only chunks of this role (no title hits)'),
    type: ChunkTypeSchema.optional().describe('only chunks of this type (no title hits)'),
    from: z.coerce.number().int().min(0).optional().describe('epoch ms: created at or after'),
    to: z.coerce.number().int().min(0).optional().describe('epoch ms: created before'),
    limit: z.coerce.number().int().min(1).max(maxSearchLimit).default(20),
    cursor: z.string().min(1).max(1000).optional().describe("the previous page's nextCursor"),
  })
  .refine((query) => query.from === undefined || query.to === undefined || query.from <= query.to, {
    message: 'from must not be after to',
  });

/** Resume point and optional stream ticket for SSE and WebSocket streams. */
export const StreamQuerySchema = z.object({
  after: z.coerce.number().int().min(0).optional(),
  ticket: z.string().min(1).max(2000).optional(),
});

export const StreamTicketResponseSchema = z.object({
  ticket: z.string(),
  /** Epoch ms after which the ticket is refused. */
  expiresAt: z.number().int(),
});

export const ContextResponseSchema = z.object({
  request: z.unknown(),
  source: z
    .enum(['worker', 'gateway-defaults'])
    .optional()
    .describe(
      "whose options built the request: a worker's (its model, token limit and tools), or the gateway's defaults without tools because no worker answered",
    ),
  cacheMisses: z
    .array(
      CacheMissSchema.extend({
        seq: z.number().int().positive(),
        turnId: z.uuid(),
        step: z.number().int().nonnegative(),
      }),
    )
    .describe(
      "the latest steps since the tab's latest compaction (the step right after it included) whose request missed the prompt cache, oldest first: the seq, turn and step of the step's first chunk, the API's cache_miss_reason type and the input tokens it could not read from cache",
    ),
});

export const HealthResponseSchema = z.object({ status: z.enum(['ok', 'unavailable']) });

export const WebhookEndpointParamsSchema = z.object({ endpointId: z.uuid() });

export const CreateWebhookBodySchema = z
  .object({
    url: WebhookUrlSchema.describe('an http(s) URL the events are POSTed to'),
    eventTypes: WebhookEventTypesSchema.describe('the events to send, at least one'),
  })
  .strict();

const WebhookSecretResponseSchema = z
  .string()
  .describe('the signing secret (whsec_...): shown only in this answer');

/** Creation and rotation answer with the secret, the only time it is shown. */
export const WebhookWithSecretResponseSchema = z.object({
  endpoint: WebhookEndpointSchema,
  secret: WebhookSecretResponseSchema,
});
export const WebhookListResponseSchema = z.object({ endpoints: z.array(WebhookEndpointSchema) });

export const DeliveriesQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
});
export const DeliveryListResponseSchema = z.object({
  deliveries: z.array(WebhookDeliverySchema).describe('newest first'),
});

/** What each error status means, for the OpenAPI document (codes as the error handler maps them). */
const errorDescriptions = {
  400: 'invalid_input: params, query, headers or body do not match the schema (or the JSON does not parse); nothing was stored',
  401: 'unauthorized: no valid API key (or, on streams, stream ticket)',
  404: "not_found: no such tab (or webhook endpoint), or another tenant's",
  409: 'conflict: the request clashes with the tab as it is (a turn is running)',
  413: 'payload_too_large: the body is larger than the gateway takes',
  415: 'unsupported_media_type: a body that is not application/json',
  422: 'idempotency_key_reused: the Idempotency-Key was sent before with another body; nothing was done',
  426: 'upgrade_required: a plain GET of the WebSocket route; open it as a WebSocket',
  429: 'rate_limited: too many requests (or failed authentications); Retry-After says when to try again',
  500: 'internal: an unexpected failure; the message says nothing more, the log has the details under the requestId',
  503: 'unavailable: Postgres or NATS cannot be reached, or the gateway is shutting down; Retry-After says when to try again',
} as const;

export type ErrorStatus = keyof typeof errorDescriptions;

/** An error status's response in a route schema: its meaning, with the one error shape. */
function errorResponse(status: ErrorStatus) {
  return {
    description: errorDescriptions[status],
    content: { 'application/json': { schema: ErrorResponseSchema } },
  };
}

/**
 * Per-status error responses for a route's schema (documented in the OpenAPI document), with
 * 500 and 503, which every route can answer: 503 `unavailable` (with `Retry-After`) while the
 * database or the bus cannot be reached or the gateway is closing.
 */
export function errorResponses<const Status extends ErrorStatus>(
  ...statuses: Status[]
): Record<Status | 500 | 503, ReturnType<typeof errorResponse>> {
  return Object.fromEntries(
    [...statuses, 500, 503].map((status) => [status, errorResponse(status as ErrorStatus)]),
  ) as Record<Status | 500 | 503, ReturnType<typeof errorResponse>>;
}
