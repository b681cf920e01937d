/**
 * The drizzle schema of chunklog's database (docs/architecture.md, "The log"). drizzle-kit
 * generates the SQL migrations in /drizzle from this file; the append, clear and lease
 * functions live in custom migrations next to them, because their bodies are plpgsql.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';

export const tenants = pgTable('tenants', {
  // Text rather than uuid: deployments name their bootstrap tenants (API_KEYS=acme:key).
  id: text('id').primaryKey().default(sql`gen_random_uuid()::text`),
  name: text('name').notNull().unique(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** API keys, stored only as sha256 hex digests. */
export const apiKeys = pgTable(
  'api_keys',
  {
    keyHash: text('key_hash').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('api_keys_tenant_id_index').on(table.tenantId)],
);

export const tabs = pgTable(
  'tabs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    // Creation order for the newest-first listing; an integer keeps the cursor exact.
    position: bigint('position', { mode: 'number' }).generatedAlwaysAsIdentity().notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    parentTabId: uuid('parent_tab_id'),
    // A fork: the tab it was forked from (null once that tab is deleted) and the seq it forked
    // after; its history up to that seq is the parent's, by reference (fork_segments).
    forkOf: uuid('fork_of'),
    forkSeq: bigint('fork_seq', { mode: 'number' }),
    title: text('title').notNull().default(''),
    config: jsonb('config').notNull().default({}),
    status: text('status').notNull().default('idle'),
    activeTurnId: uuid('active_turn_id'),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    // The highest seq a clear ever removed. The tail of a tab is the larger of this and its
    // highest stored seq, so a seq is never reused after a clear.
    seqFloor: bigint('seq_floor', { mode: 'number' }).notNull().default(0),
    // How many cancels the tab has had. A message is stamped with it when the gateway accepts
    // it; a turn stops when the tab's generation rises above its opening message's stamp, so a
    // cancel reaches a turn no worker was holding yet and never touches a later message.
    cancelGeneration: bigint('cancel_generation', { mode: 'number' }).notNull().default(0),
    // The stamp the running turn started under, recorded by its holder so a takeover knows
    // which cancels apply to it; null between turns.
    turnCancelGeneration: bigint('turn_cancel_generation', { mode: 'number' }),
    // The turn paused for a person's decision, while it waits (null otherwise): its id, step,
    // cancel stamp and the calls waiting. Set by the holder before it lets the tab go, cleared
    // by the holder that resumes it.
    waiting: jsonb('waiting'),
    // When the waiting calls expire (denied with reason `expired`); the sweep reads its index.
    waitingExpiresAt: timestamp('waiting_expires_at', { withTimezone: true }),
    usageInputTokens: bigint('usage_input_tokens', { mode: 'number' }).notNull().default(0),
    usageOutputTokens: bigint('usage_output_tokens', { mode: 'number' }).notNull().default(0),
    usageCacheReadInputTokens: bigint('usage_cache_read_input_tokens', { mode: 'number' })
      .notNull()
      .default(0),
    usageCacheCreationInputTokens: bigint('usage_cache_creation_input_tokens', { mode: 'number' })
      .notNull()
      .default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    index('tabs_tenant_position_index').on(table.tenantId, table.position.desc()),
    // Only running tabs can have an expiring lease; the sweep reads this small index.
    index('tabs_running_lease_index')
      .on(table.leaseExpiresAt)
      .where(sql`${table.status} = 'running'`),
    index('tabs_parent_tab_id_index').on(table.parentTabId),
    index('tabs_fork_of_index').on(table.forkOf, table.position),
    index('tabs_waiting_expiry_index')
      .on(table.waitingExpiresAt)
      .where(sql`${table.waitingExpiresAt} IS NOT NULL`),
    // A subagent's child tab outlives its parent's deletion as a top-level tab.
    foreignKey({ columns: [table.parentTabId], foreignColumns: [table.id] }).onDelete('set null'),
    // A fork outlives its parent's deletion, its history kept (fork_segments).
    foreignKey({ columns: [table.forkOf], foreignColumns: [table.id] }).onDelete('set null'),
    check('tabs_status_check', sql`${table.status} in ('idle', 'running')`),
  ],
);

export const chunks = pgTable(
  'chunks',
  {
    id: uuid('id').primaryKey(),
    // No foreign key: the per-append row lock it takes on tabs would cost a tab-row write on
    // every append. chunklog_append checks the tab under the tab's advisory lock, and
    // chunklog_delete_tab deletes a tab's chunks under the same lock, so none can be orphaned.
    tabId: uuid('tab_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    turnId: uuid('turn_id').notNull(),
    step: integer('step').notNull(),
    role: text('role').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    // Every page is a range scan of this index, in either direction, never a sort.
    unique('chunks_tab_id_seq_unique').on(table.tabId, table.seq),
    // A tab's latest compaction in one index probe, however deep the tab (the worker's read).
    index('chunks_compaction_index')
      .on(table.tabId, table.seq)
      .where(sql`${table.type} = 'compaction'`),
    // Full-text search (docs/architecture.md, "Search"): an expression index, so an append
    // writes no extra column; Postgres computes the vector as it inserts the index entry. The
    // function chunklog_search_text (migration 0002) picks the searchable text per chunk type.
    index('chunks_search_simple_index').using(
      'gin',
      sql`to_tsvector('simple'::regconfig, chunklog_search_text(${table.type}, ${table.data}))`,
    ),
  ],
);

/** Messages accepted by the gateway that a worker has not yet appended as user chunks. */
export const inbox = pgTable(
  'inbox',
  {
    chunkId: uuid('chunk_id').primaryKey(),
    tabId: uuid('tab_id')
      .notNull()
      .references(() => tabs.id, { onDelete: 'cascade' }),
    text: text('text').notNull(),
    mode: text('mode').notNull(),
    // The tab's cancel generation when the gateway accepted the message (the store stamps the
    // tab's current one on a message that came without). No default: a 0 would put the message
    // below every cancel the tab ever had.
    cancelGeneration: bigint('cancel_generation', { mode: 'number' }).notNull(),
    // The intake queue's sequence of the message (on NATS the JetStream stream sequence): the
    // order the gateway accepted messages in, which created_at is not, since workers store
    // messages concurrently.
    intakeSeq: bigint('intake_seq', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    index('inbox_tab_order_index').on(table.tabId, table.intakeSeq, table.chunkId),
    check(
      'inbox_mode_check',
      sql`${table.mode} in ('interrupt', 'enqueue', 'reject', 'compact', 'approval')`,
    ),
  ],
);

/**
 * What a fork refers to instead of copying: for each tab whose chunks it shows (its parent, the
 * parent's parent, ...), the seq range it shows of them, `lo < seq <= hi`. A fork's own chunks
 * are its own rows, from `hi` of its parent's segment on. No foreign key on `ancestor_id`: a
 * deleted tab's chunks stay while a fork refers to them (chunklog_delete_tab collects them once
 * none does).
 */
export const forkSegments = pgTable(
  'fork_segments',
  {
    tabId: uuid('tab_id')
      .notNull()
      .references(() => tabs.id, { onDelete: 'cascade' }),
    ancestorId: uuid('ancestor_id').notNull(),
    lo: bigint('lo', { mode: 'number' }).notNull(),
    hi: bigint('hi', { mode: 'number' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.tabId, table.ancestorId] }),
    index('fork_segments_ancestor_index').on(table.ancestorId),
  ],
);

/**
 * Decisions on tool calls that wait for a person (POST /v1/tabs/:tabId/approvals), recorded by
 * the gateway before it wakes a worker: one per call, so a second decision on a call is refused
 * with the first. The worker that resumes the turn appends each as an `approval_decision` chunk
 * with `chunk_id`.
 */
export const approvalDecisions = pgTable(
  'approval_decisions',
  {
    tabId: uuid('tab_id')
      .notNull()
      .references(() => tabs.id, { onDelete: 'cascade' }),
    callId: text('call_id').notNull(),
    turnId: uuid('turn_id').notNull(),
    chunkId: uuid('chunk_id').notNull(),
    decision: text('decision').notNull(),
    input: jsonb('input'),
    reason: text('reason'),
    decidedBy: text('decided_by').notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.tabId, table.callId] }),
    check('approval_decisions_decision_check', sql`${table.decision} in ('approve', 'deny')`),
  ],
);

/**
 * Idempotency keys (the `Idempotency-Key` header of POST /v1/tabs and of a tab's messages), per
 * tenant and scope (the method and path they were sent to): the hash of the first request's
 * body, so a key reused with another body is refused, and its answer once it succeeded, so a
 * replay gets the same answer. A tab's keys go with the tab.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    tabId: uuid('tab_id').references(() => tabs.id, { onDelete: 'cascade' }),
    requestHash: text('request_hash').notNull(),
    // Null until the first request with the key succeeded: a retry then runs the request again.
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.tenantId, table.scope, table.key] }),
    index('idempotency_keys_tab_id_index').on(table.tabId),
  ],
);

/** A tenant's webhook endpoints (docs/architecture.md, "Webhooks"). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    eventTypes: text('event_types').array().notNull(),
    // In clear: signing needs the key itself. The API shows it only at creation and rotation.
    secret: text('secret').notNull(),
    secretSetAt: timestamp('secret_set_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('webhook_endpoints_tenant_id_index').on(table.tenantId, table.createdAt)],
);

/**
 * The webhook outbox: one row per event and endpoint, written in the statement that records
 * the turn's end, so no end is lost between the two. A dispatcher claims due rows by pushing
 * `next_attempt_at` past the attempt's timeout (its lease) and records how the attempt went.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    // The webhook-id of the event: shared by its rows for every endpoint and by every attempt.
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    // Null once delivered or failed.
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).defaultNow(),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    // The dispatcher's claim reads only pending rows, oldest due first.
    index('webhook_deliveries_due_index')
      .on(table.nextAttemptAt)
      .where(sql`${table.status} = 'pending'`),
    index('webhook_deliveries_endpoint_index').on(table.endpointId, table.createdAt.desc()),
    // The prune reads finished rows, oldest first.
    index('webhook_deliveries_done_index')
      .on(table.createdAt)
      .where(sql`${table.status} <> 'pending'`),
    check(
      'webhook_deliveries_status_check',
      sql`${table.status} in ('pending', 'delivered', 'failed')`,
    ),
  ],
);
