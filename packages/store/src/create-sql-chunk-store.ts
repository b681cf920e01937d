import {
  type Chunk,
  type ChunkPage,
  ConflictError,
  InvalidInputError,
  NotFoundError,
  type Tab,
  TabConfigSchema,
  UsageSchema,
} from '@chunklog/chunk-core';
import { z } from 'zod';
import type { AppendMetrics } from './append-metrics';
import { type ChunkRow, chunkColumns, chunkFromRow } from './chunk-row';
import type { ChunkStore, InboxMessage, MessageMode, TurnLease } from './chunk-store';
import { containsNul } from './contains-nul';
import { createGroupCommit } from './group-commit';
import { hashApiKey } from './hash-api-key';
import { mapDatabaseError } from './map-database-error';
import { type PageRange, pageStatement } from './page-statement';
import type { SqlClient } from './sql-client';
import { decodeTabCursor, encodeTabCursor } from './tab-cursor';
import { type TabRow, tabColumns, tabFromRow } from './tab-row';
import { maxChunksPerAppend, validateAppend } from './validate-append';

/** The largest page, tab listing or inbox message the store serves or accepts. */
const maxPageLimit = 500;
const maxInboxTextBytes = 1024 * 1024;

const IdSchema = z.uuid();
const TenantIdSchema = z.string().min(1).max(200);

/** Postgres text and jsonb cannot hold U+0000: refused here, with a message, not by the driver. */
const noNul = (value: unknown) => !containsNul(value);

const CreateTabSchema = z
  .object({
    tenantId: TenantIdSchema,
    title: z.string().max(1000).refine(noNul, 'title must not contain NUL (\\u0000)').optional(),
    config: TabConfigSchema.refine(noNul, 'config must not contain NUL (\\u0000)').optional(),
    parentTabId: IdSchema.optional(),
  })
  .strict();

const PageOptionsSchema = z
  .object({
    before: z.number().int().positive().optional(),
    after: z.number().int().nonnegative().optional(),
    limit: z.number().int().min(1).max(maxPageLimit),
  })
  .strict()
  .refine((options) => options.before === undefined || options.after === undefined, {
    message: 'before and after are exclusive',
  });

const ListTabsSchema = z
  .object({ limit: z.number().int().min(1).max(maxPageLimit), cursor: z.string().optional() })
  .strict();

const LeaseInputSchema = z.object({
  owner: z.string().min(1).max(200),
  turnId: IdSchema,
  leaseMs: z.number().int().min(1).max(86_400_000),
});
const RenewInputSchema = LeaseInputSchema.omit({ turnId: true });
const ReleaseInputSchema = z.object({ owner: z.string().min(1).max(200), usage: UsageSchema });

const InboxPutSchema = z
  .object({
    tabId: IdSchema,
    chunkId: IdSchema,
    text: z
      .string()
      .refine((text) => Buffer.byteLength(text, 'utf8') <= maxInboxTextBytes, 'text too large')
      .refine((text) => !text.includes('\u0000'), 'text contains a NUL character'),
    mode: z.enum(['interrupt', 'enqueue', 'reject']),
    cancelGeneration: z.number().int().nonnegative().optional(),
    intakeSeq: z.number().int().nonnegative().optional(),
  })
  .strict();

const TurnCancelGenerationSchema = z.object({
  owner: z.string().min(1).max(200),
  cancelGeneration: z.number().int().nonnegative(),
});

const CreateTenantSchema = z.object({
  name: z.string().min(1).max(200),
  id: TenantIdSchema.optional(),
});
const ApiKeySchema = z.string().min(1).max(1000);

function parse<Output>(schema: z.ZodType<Output>, value: unknown, what: string): Output {
  const result = schema.safeParse(value);
  if (!result.success) throw new InvalidInputError(`invalid ${what}: ${result.error.message}`);
  return result.data;
}

/** A malformed id cannot name a stored tab: it is "not found", like any unknown id. */
function requireTabId(tabId: unknown): string {
  if (!IdSchema.safeParse(tabId).success) throw new NotFoundError(`tab ${String(tabId)} not found`);
  return tabId as string;
}

interface PageRow extends ChunkRow {
  highest_seq: number | string | bigint | null;
  lowest_seq: number | string | bigint | null;
}

interface InboxRow extends Record<string, unknown> {
  tab_id: string;
  chunk_id: string;
  text: string;
  mode: MessageMode;
  cancel_generation: number | string | bigint;
  created_at_ms: number;
}

interface LeaseRow extends Record<string, unknown> {
  active_turn_id: string | null;
  lease_owner: string | null;
  lease_expires_at_ms: number | null;
  turn_cancel_generation: number | string | bigint | null;
}

/**
 * The store over any SQL client: every adapter (node-postgres, PGlite) shares these statements,
 * so the adapters cannot drift apart. Each operation is one statement, hence one round trip
 * (acquireLease adds a second to read the tab back); the multi-step ones (append, clear, delete,
 * lease) run as plpgsql functions from the migrations.
 */
export function createSqlChunkStore(
  client: SqlClient,
  lifecycle: { migrate(): Promise<void>; close(): Promise<void> },
  appends: { lanes: number; metrics: AppendMetrics },
): ChunkStore {
  const groupCommit = createGroupCommit(client, {
    lanes: appends.lanes,
    limits: { maxItems: 64, maxChunks: maxChunksPerAppend, maxBytes: 4 * 1024 * 1024 },
    metrics: appends.metrics,
  });

  async function run<Row extends Record<string, unknown>>(
    subject: string,
    text: string,
    values: unknown[],
    name?: string,
  ): Promise<Row[]> {
    try {
      return await client.query<Row>(text, values, name);
    } catch (error) {
      throw mapDatabaseError(error, subject);
    }
  }

  async function getTab(tabId: string, options?: { tenantId?: string }): Promise<Tab> {
    const id = requireTabId(tabId);
    const rows = await run<TabRow>(
      'get tab',
      `SELECT ${tabColumns} FROM tabs t WHERE t.id = $1 AND ($2::text IS NULL OR t.tenant_id = $2)`,
      [id, options?.tenantId ?? null],
      'chunklog_get_tab',
    );
    const row = rows[0];
    if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
    return tabFromRow(row);
  }

  return {
    migrate: () => lifecycle.migrate(),
    async close() {
      await groupCommit.idle();
      await lifecycle.close();
    },

    async createTab(input) {
      const parsed = parse(CreateTabSchema, input, 'tab');
      // The parent must be a tab of the same tenant; otherwise nothing is inserted.
      const rows = await run<TabRow>(
        'create tab',
        `INSERT INTO tabs AS t (tenant_id, title, config, parent_tab_id)
         SELECT $1, $2, $3::jsonb, $4::uuid
         WHERE $4::uuid IS NULL
           OR EXISTS (SELECT 1 FROM tabs p WHERE p.id = $4::uuid AND p.tenant_id = $1)
         RETURNING ${tabColumns}`,
        [
          parsed.tenantId,
          parsed.title ?? '',
          JSON.stringify(parsed.config ?? {}),
          parsed.parentTabId ?? null,
        ],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`parent tab ${parsed.parentTabId} not found`);
      return tabFromRow(row);
    },

    getTab,

    async listTabs(tenantId, options) {
      const tenant = parse(TenantIdSchema, tenantId, 'tenant id');
      const { limit, cursor } = parse(ListTabsSchema, options, 'listing options');
      const position = cursor === undefined ? null : decodeTabCursor(cursor);
      // Two statement texts rather than "$2 IS NULL OR ...", so each plans as an index range.
      const rows =
        position === null
          ? await run<TabRow>(
              'list tabs',
              `SELECT ${tabColumns} FROM tabs t WHERE t.tenant_id = $1
               ORDER BY t.position DESC LIMIT $2`,
              [tenant, limit + 1],
            )
          : await run<TabRow>(
              'list tabs',
              `SELECT ${tabColumns} FROM tabs t WHERE t.tenant_id = $1 AND t.position < $3
               ORDER BY t.position DESC LIMIT $2`,
              [tenant, limit + 1, position],
            );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        tabs: page.map(tabFromRow),
        nextCursor:
          rows.length > limit && last !== undefined ? encodeTabCursor(Number(last.position)) : null,
      };
    },

    async deleteTab(tabId, options) {
      const id = requireTabId(tabId);
      const rows = await run<{ deleted: boolean }>(
        'delete tab',
        'SELECT chunklog_delete_tab($1, $2) AS deleted',
        [id, options?.tenantId ?? null],
      );
      if (rows[0]?.deleted !== true) throw new NotFoundError(`tab ${id} not found`);
    },

    async clearTab(tabId) {
      const id = requireTabId(tabId);
      const rows = await run<{ cleared: boolean }>(
        'clear tab',
        'SELECT chunklog_clear($1) AS cleared',
        [id],
      );
      if (rows[0]?.cleared !== true) throw new NotFoundError(`tab ${id} not found`);
    },

    async tabTenant(tabId) {
      if (!IdSchema.safeParse(tabId).success) return null;
      const rows = await run<{ tenant_id: string }>(
        'tab tenant',
        'SELECT tenant_id FROM tabs WHERE id = $1',
        [tabId],
        'chunklog_tab_tenant',
      );
      return rows[0]?.tenant_id ?? null;
    },

    async append(tabId, chunks, options) {
      const id = requireTabId(tabId);
      const { chunksJson, expectedSeq } = validateAppend(id, chunks, options);
      return groupCommit.append({ tabId: id, chunksJson, chunkCount: chunks.length, expectedSeq });
    },

    async page(tabId, options): Promise<ChunkPage> {
      const id = requireTabId(tabId);
      const { before, after, limit } = parse(PageOptionsSchema, options, 'page options');
      const range: PageRange =
        after !== undefined
          ? { kind: 'after', seq: after }
          : before !== undefined
            ? { kind: 'before', seq: before }
            : { kind: 'tail' };
      // One extra row tells whether more chunks lie beyond the page.
      const statement = pageStatement(id, limit + 1, range);
      const rows = await run<PageRow>('page', statement.text, statement.values, statement.name);
      const first = rows[0];
      if (first === undefined) throw new NotFoundError(`tab ${id} not found`);
      const found = rows.filter((row) => row.id !== null);
      const page = found.slice(0, limit);
      if (statement.descending) page.reverse();
      return {
        chunks: page.map((row) => chunkFromRow(id, row)),
        total:
          first.highest_seq === null || first.lowest_seq === null
            ? 0
            : Number(first.highest_seq) - Number(first.lowest_seq) + 1,
        hasMore: found.length > limit,
      };
    },

    async readAll(tabId): Promise<Chunk[]> {
      const id = requireTabId(tabId);
      const rows = await run<ChunkRow>(
        'read all',
        `SELECT ${chunkColumns}
         FROM tabs t LEFT JOIN chunks c ON c.tab_id = t.id
         WHERE t.id = $1 ORDER BY c.seq`,
        [id],
      );
      if (rows.length === 0) throw new NotFoundError(`tab ${id} not found`);
      return rows.filter((row) => row.id !== null).map((row) => chunkFromRow(id, row));
    },

    async acquireLease(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, turnId, leaseMs } = parse(LeaseInputSchema, input, 'lease');
      const rows = await run<{
        acquired: boolean;
        taken_over: boolean;
        previous_turn_id: string | null;
        previous_owner: string | null;
      }>('acquire lease', 'SELECT * FROM chunklog_acquire_lease($1, $2, $3, $4)', [
        id,
        owner,
        turnId,
        leaseMs,
      ]);
      const result = rows[0];
      if (result === undefined) throw new NotFoundError(`tab ${id} not found`);
      const tab = await getTab(id);
      const takenOver =
        result.taken_over && result.previous_turn_id !== null && result.previous_owner !== null
          ? { turnId: result.previous_turn_id, owner: result.previous_owner }
          : undefined;
      return takenOver === undefined
        ? { acquired: result.acquired, tab }
        : { acquired: result.acquired, takenOver, tab };
    },

    async renewLease(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, leaseMs } = parse(RenewInputSchema, input, 'lease renewal');
      // Renewal after expiry is allowed as long as nobody took the lease over: the owner
      // still holds the tab, and acquireLease's row lock decides any race with a taker.
      const rows = await run(
        'renew lease',
        `UPDATE tabs SET lease_expires_at = now() + $3 * interval '1 millisecond'
         WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING id`,
        [id, owner, leaseMs],
      );
      return rows.length > 0;
    },

    async releaseLease(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, usage } = parse(ReleaseInputSchema, input, 'lease release');
      const rows = await run(
        'release lease',
        `UPDATE tabs SET status = 'idle', active_turn_id = NULL, lease_owner = NULL,
           lease_expires_at = NULL, turn_cancel_generation = NULL, updated_at = now(),
           usage_input_tokens = usage_input_tokens + $3,
           usage_output_tokens = usage_output_tokens + $4,
           usage_cache_read_input_tokens = usage_cache_read_input_tokens + $5,
           usage_cache_creation_input_tokens = usage_cache_creation_input_tokens + $6
         WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING id`,
        [
          id,
          owner,
          usage.inputTokens,
          usage.outputTokens,
          usage.cacheReadInputTokens,
          usage.cacheCreationInputTokens,
        ],
      );
      return rows.length > 0;
    },

    async tabsNeedingWork(limit) {
      const bounded = parse(z.number().int().min(1).max(10_000), limit, 'limit');
      const rows = await run<{ id: string }>(
        'tabs needing work',
        `(SELECT t.id FROM tabs t WHERE t.status = 'running' AND t.lease_expires_at <= now()
          ORDER BY t.lease_expires_at LIMIT $1)
         UNION
         (SELECT DISTINCT i.tab_id FROM inbox i JOIN tabs t ON t.id = i.tab_id
          WHERE t.status = 'idle' LIMIT $1)
         LIMIT $1`,
        [bounded],
      );
      return rows.map((row) => row.id);
    },

    async getLease(tabId): Promise<TurnLease | null> {
      const id = requireTabId(tabId);
      const rows = await run<LeaseRow>(
        'get lease',
        `SELECT active_turn_id, lease_owner, turn_cancel_generation,
           floor(extract(epoch FROM lease_expires_at) * 1000)::double precision AS lease_expires_at_ms
         FROM tabs WHERE id = $1`,
        [id],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      if (
        row.lease_owner === null ||
        row.active_turn_id === null ||
        row.lease_expires_at_ms === null
      ) {
        return null;
      }
      return {
        tabId: id,
        turnId: row.active_turn_id,
        owner: row.lease_owner,
        expiresAt: row.lease_expires_at_ms,
        cancelGeneration:
          row.turn_cancel_generation === null ? null : Number(row.turn_cancel_generation),
      };
    },

    async setTurnCancelGeneration(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, cancelGeneration } = parse(
        TurnCancelGenerationSchema,
        input,
        'turn cancel generation',
      );
      const rows = await run(
        'set turn cancel generation',
        `UPDATE tabs SET turn_cancel_generation = $3
         WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING id`,
        [id, owner, cancelGeneration],
      );
      return rows.length > 0;
    },

    async requestCancel(tabId, options) {
      const id = requireTabId(tabId);
      const rows = await run<{ cancel_generation: number | string | bigint }>(
        'request cancel',
        `UPDATE tabs SET cancel_generation = cancel_generation + 1
         WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2) RETURNING cancel_generation`,
        [id, options?.tenantId ?? null],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      return Number(row.cancel_generation);
    },

    async cancelGeneration(tabId, options) {
      const id = requireTabId(tabId);
      const rows = await run<{ cancel_generation: number | string | bigint }>(
        'cancel generation',
        `SELECT cancel_generation FROM tabs WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)`,
        [id, options?.tenantId ?? null],
        'chunklog_cancel_generation',
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      return Number(row.cancel_generation);
    },

    async inboxPut(message) {
      const parsed = parse(InboxPutSchema, message, 'inbox message');
      // A chunkId already in the log is a message already delivered: refuse it quietly.
      // Unstamped (an older gateway): the generation now, so no cancel already made touches it.
      // The 0 fallback is for an unknown tab, which the foreign key then refuses as not found.
      const rows = await run(
        'inbox put',
        `INSERT INTO inbox (chunk_id, tab_id, text, mode, cancel_generation, intake_seq)
         SELECT $1, $2, $3, $4,
           coalesce($5::bigint, (SELECT cancel_generation FROM tabs WHERE id = $2::uuid), 0),
           $6::bigint
         WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE id = $1)
         ON CONFLICT (chunk_id) DO NOTHING
         RETURNING chunk_id`,
        [
          parsed.chunkId,
          parsed.tabId,
          parsed.text,
          parsed.mode,
          parsed.cancelGeneration ?? null,
          parsed.intakeSeq ?? null,
        ],
      );
      return rows.length > 0;
    },

    async inboxList(tabId): Promise<InboxMessage[]> {
      const id = requireTabId(tabId);
      const rows = await run<InboxRow>(
        'inbox list',
        `SELECT tab_id, chunk_id, text, mode, cancel_generation,
           floor(extract(epoch FROM created_at) * 1000)::double precision AS created_at_ms
         FROM inbox WHERE tab_id = $1
         ORDER BY intake_seq NULLS FIRST, created_at, chunk_id`,
        [id],
      );
      return rows.map((row) => ({
        tabId: row.tab_id,
        chunkId: row.chunk_id,
        text: row.text,
        mode: row.mode,
        cancelGeneration: Number(row.cancel_generation),
        createdAt: row.created_at_ms,
      }));
    },

    async inboxRemove(tabId, chunkIds) {
      const id = requireTabId(tabId);
      const ids = parse(z.array(IdSchema).max(10_000), chunkIds, 'chunk ids');
      if (ids.length === 0) return;
      await run(
        'inbox remove',
        'DELETE FROM inbox WHERE tab_id = $1 AND chunk_id = ANY ($2::uuid[])',
        [id, ids],
      );
    },

    async createTenant(input) {
      const { name, id } = parse(CreateTenantSchema, input, 'tenant');
      // Idempotent, so every start of a service can bootstrap its configured tenants.
      // A concurrent creator's row is invisible to this statement's snapshot when the insert
      // waited on it and did nothing; a second statement takes a fresh snapshot and sees it.
      const rows = await retryOnceWhenEmpty(() =>
        run<{ id: string; name: string }>(
          'create tenant',
          `WITH inserted AS (
           INSERT INTO tenants (id, name) VALUES (coalesce($1, gen_random_uuid()::text), $2)
           ON CONFLICT DO NOTHING RETURNING id, name
         )
         SELECT id, name FROM inserted
         UNION ALL
         SELECT id, name FROM tenants WHERE name = $2 AND ($1::text IS NULL OR id = $1)
         LIMIT 1`,
          [id ?? null, name],
        ),
      );
      const row = rows[0];
      if (row === undefined) {
        throw new ConflictError(`tenant ${id ?? ''} (${name}) clashes with another tenant`);
      }
      return { id: row.id, name: row.name };
    },

    async addApiKey(tenantId, key) {
      const tenant = parse(TenantIdSchema, tenantId, 'tenant id');
      const plain = parse(ApiKeySchema, key, 'api key');
      const rows = await retryOnceWhenEmpty(() =>
        run<{ tenant_id: string }>(
          'add api key',
          `WITH inserted AS (
           INSERT INTO api_keys (key_hash, tenant_id) VALUES ($1, $2)
           ON CONFLICT (key_hash) DO NOTHING RETURNING tenant_id
         )
         SELECT tenant_id FROM inserted
         UNION ALL
         SELECT tenant_id FROM api_keys WHERE key_hash = $1
         LIMIT 1`,
          [hashApiKey(plain), tenant],
        ),
      );
      if (rows[0]?.tenant_id !== tenant) {
        throw new ConflictError('this api key already belongs to another tenant');
      }
    },

    async authenticate(key) {
      if (!ApiKeySchema.safeParse(key).success) return null;
      const rows = await run<{ tenant_id: string }>(
        'authenticate',
        'SELECT tenant_id FROM api_keys WHERE key_hash = $1',
        [hashApiKey(key)],
        'chunklog_authenticate',
      );
      return rows[0]?.tenant_id ?? null;
    },
  };
}

/** Runs an insert-or-select statement again when it saw no row (see createTenant). */
async function retryOnceWhenEmpty<T>(statement: () => Promise<T[]>): Promise<T[]> {
  const rows = await statement();
  return rows.length > 0 ? rows : statement();
}
