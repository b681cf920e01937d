import type { ApprovalStore } from './approvals/approval-store';
import type { CancelStore } from './cancel/cancel-store';
import type { IdempotencyStore } from './idempotency/idempotency-store';
import type { InboxStore } from './inbox/inbox-store';
import type { LeaseStore } from './leases/lease-store';
import type { ChunkLog } from './log/chunk-log';
import type { SearchStore } from './search/search-store';
import type { TabStore } from './tabs/tab-store';
import type { TenantStore } from './tenants/tenant-store';
import type { WebhookOutbox } from './webhooks/webhook-outbox';
import type { WebhookStore } from './webhooks/webhook-store';

/** Opening and closing a store (the schema and the connections). */
export interface StoreLifecycle {
  /** Applies pending migrations. */
  migrate(): Promise<void>;
  /** Waits for appends in flight, then closes the connections the store owns. */
  close(): Promise<void>;
}

/**
 * The storage port: every durable operation of chunklog, one slice per aggregate, composed
 * into one adapter. A component that needs part of it names its slices (the gateway reads
 * tabs, logs, cancels, tenants, idempotency keys and webhook endpoints; the worker also takes
 * leases, works the inbox and dispatches the webhook outbox).
 */
export interface ChunkStore
  extends StoreLifecycle,
    TabStore,
    ChunkLog,
    LeaseStore,
    CancelStore,
    InboxStore,
    TenantStore,
    IdempotencyStore,
    WebhookStore,
    WebhookOutbox,
    ApprovalStore,
    SearchStore {}
