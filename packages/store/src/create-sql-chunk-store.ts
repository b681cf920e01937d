import { createSqlApprovalStore } from './approvals/approval-store';
import { createSqlCancelStore } from './cancel/cancel-store';
import type { ChunkStore, StoreLifecycle } from './chunk-store';
import { createSqlIdempotencyStore } from './idempotency/idempotency-store';
import { createSqlInboxStore } from './inbox/inbox-store';
import { createSqlLeaseStore } from './leases/lease-store';
import type { AppendMetrics } from './log/append-metrics';
import { createSqlChunkLog } from './log/chunk-log';
import { createGroupCommit } from './log/group-commit';
import { maxChunksPerAppend } from './log/validate-append';
import { createSqlSearchStore, SearchConfigSchema } from './search/search-store';
import { type SqlClient, statementRunner } from './sql-client';
import { createSqlTabStore } from './tabs/tab-store';
import { createSqlTenantStore } from './tenants/tenant-store';
import { createSqlWebhookOutbox } from './webhooks/webhook-outbox';
import { createSqlWebhookStore } from './webhooks/webhook-store';

/** The text search configuration searches use, and how an index for it is built. */
export interface SearchSettings {
  /** A Postgres text search configuration (`simple`, `english`, …). */
  config: string;
  /** CREATE INDEX CONCURRENTLY (Postgres) rather than a plain build (PGlite, one connection). */
  concurrentIndexBuild: boolean;
}

/**
 * The store over any SQL client: every adapter (node-postgres, PGlite) shares these statements,
 * so the adapters cannot drift apart. Each operation is one statement, hence one round trip
 * (readFromLatestCompaction takes two); the multi-step ones (append, clear, delete, lease) run
 * as plpgsql functions from the migrations. Appends go through the group commit.
 */
export function createSqlChunkStore(
  client: SqlClient,
  lifecycle: StoreLifecycle,
  appends: { lanes: number; metrics: AppendMetrics },
  search: SearchSettings = { config: 'simple', concurrentIndexBuild: false },
): ChunkStore {
  const run = statementRunner(client);
  const searchConfig = SearchConfigSchema.parse(search.config);
  const groupCommit = createGroupCommit(client, {
    lanes: appends.lanes,
    limits: { maxItems: 64, maxChunks: maxChunksPerAppend, maxBytes: 4 * 1024 * 1024 },
    metrics: appends.metrics,
  });
  const tabs = createSqlTabStore(run);
  return {
    async migrate() {
      await lifecycle.migrate();
      // The migrations index the `simple` configuration; another one gets its own index here
      // (concurrently on Postgres, so appends go on while it builds).
      if (searchConfig !== 'simple') {
        await run(
          'build the search index',
          `CREATE INDEX ${search.concurrentIndexBuild ? 'CONCURRENTLY ' : ''}IF NOT EXISTS
             chunks_search_${searchConfig}_index ON chunks USING gin
             (to_tsvector('${searchConfig}'::regconfig, chunklog_search_text(type, data)))`,
          [],
        );
      }
    },
    async close() {
      await groupCommit.idle();
      await lifecycle.close();
    },
    ...tabs,
    ...createSqlChunkLog(run, groupCommit),
    ...createSqlLeaseStore(run),
    ...createSqlCancelStore(run),
    ...createSqlInboxStore(run),
    ...createSqlTenantStore(run),
    ...createSqlIdempotencyStore(run),
    ...createSqlWebhookStore(run),
    ...createSqlWebhookOutbox(run),
    ...createSqlApprovalStore(run),
    ...createSqlSearchStore(run, searchConfig),
  };
}
