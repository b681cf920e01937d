export {
  type ApprovalDecisionRecord,
  type ApprovalStore,
  type NewApprovalDecision,
  type StoredWaitingCall,
  type TabWaiting,
  TabWaitingSchema,
} from './approvals/approval-store';
export type { CancelStore } from './cancel/cancel-store';
export type { ChunkStore, StoreLifecycle } from './chunk-store';
export type {
  IdempotencyKeyName,
  IdempotencyRecord,
  IdempotencyStore,
} from './idempotency/idempotency-store';
export type { InboxMessage, InboxStore, MessageMode } from './inbox/inbox-store';
export type { AcquireLeaseResult, LeaseStore, TurnLease } from './leases/lease-store';
export type { AppendOptions, ChunkLog, ChunkReader, PageOptions } from './log/chunk-log';
export { maxChunksPerAppend } from './log/validate-append';
export { createPgliteStore, type PgliteStoreOptions } from './pglite/create-pglite-store';
export { openPgliteFolder, type PgliteFolderOptions } from './pglite/open-pglite-folder';
export type { PgliteThread } from './pglite/pglite-thread';
export { createPostgresStore, type PostgresStoreOptions } from './postgres/create-postgres-store';
export {
  SearchConfigSchema,
  type SearchOptions,
  type SearchStore,
  snippetHtml,
} from './search/search-store';
export type { TabStore } from './tabs/tab-store';
export type { TenantStore } from './tenants/tenant-store';
export type {
  ClaimedWebhookDelivery,
  WebhookAttemptResult,
  WebhookOutbox,
} from './webhooks/webhook-outbox';
export { webhookMessageId } from './webhooks/webhook-rows';
export {
  maxWebhookUrlLength,
  WebhookEventTypesSchema,
  WebhookSecretSchema,
  type WebhookStore,
  WebhookUrlSchema,
} from './webhooks/webhook-store';
