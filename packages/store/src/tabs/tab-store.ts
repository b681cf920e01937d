import { NotFoundError, type Tab, type TabConfig, TabConfigSchema } from '@chunklog/chunk-core';
import { z } from 'zod';
import { IdSchema, maxPageLimit, noNul, parse, requireTabId, TenantIdSchema } from '../input';
import type { RunStatement } from '../sql-client';
import { decodeTabCursor, encodeTabCursor } from './tab-cursor';
import { type TabRow, tabColumns, tabFromRow } from './tab-row';

/** Tabs: a tenant's conversations, each the owner of one chunk log. */
export interface TabStore {
  /**
   * With an id, idempotent: a tab of that id already the tenant's is returned as it stands (a
   * request retried with an idempotency key); one of another tenant is not found.
   */
  createTab(input: {
    tenantId: string;
    title?: string;
    config?: TabConfig;
    parentTabId?: string;
    id?: string;
  }): Promise<Tab>;
  /**
   * Forks a tab after `atSeq` (0..its last seq): a new tab of the same tenant and settings whose
   * history up to `atSeq` is the parent's, by reference, and whose own chunks continue at
   * `atSeq + 1`. Costs the same at any depth. Where a fork may be made (not mid-step) is the
   * caller's to check (chunk-core's isForkPoint). With an id, idempotent as createTab is.
   * Throws NotFoundError for another tenant's parent.
   */
  forkTab(input: {
    tenantId: string;
    parentTabId: string;
    atSeq: number;
    title?: string;
    id?: string;
  }): Promise<Tab>;
  /** The tab's forks, newest first, a page at a time (the versions a client shows). */
  listForks(
    tabId: string,
    options: { tenantId?: string; limit: number; cursor?: string },
  ): Promise<{ tabs: Tab[]; nextCursor: string | null }>;
  /** Throws NotFoundError when absent or (with tenantId) another tenant's. */
  getTab(tabId: string, options?: { tenantId?: string }): Promise<Tab>;
  listTabs(
    tenantId: string,
    options: { limit: number; cursor?: string },
  ): Promise<{ tabs: Tab[]; nextCursor: string | null }>;
  /** How many tabs the tenant has, counted no further than `upTo` (so a cap costs `upTo` at most). */
  countTabs(tenantId: string, upTo: number): Promise<number>;
  /** Sets the title; throws NotFoundError when absent or (with tenantId) another tenant's. */
  renameTab(tabId: string, input: { title: string; tenantId?: string }): Promise<Tab>;
  deleteTab(tabId: string, options?: { tenantId?: string }): Promise<void>;
  /** Deletes every chunk; seq is never reused afterwards. */
  clearTab(tabId: string): Promise<void>;
  /** Tenant of a tab, or null when the tab does not exist. */
  tabTenant(tabId: string): Promise<string | null>;
  /**
   * The name of a tab's tenant (what API_KEYS and an MCP secret's tenant list call it), in one
   * statement; null when the tab does not exist.
   */
  tabTenantName(tabId: string): Promise<string | null>;
}

const TitleSchema = z.string().max(1000).refine(noNul, 'title must not contain NUL (\\u0000)');

const CreateTabSchema = z
  .object({
    tenantId: TenantIdSchema,
    title: TitleSchema.optional(),
    config: TabConfigSchema.refine(noNul, 'config must not contain NUL (\\u0000)').optional(),
    parentTabId: IdSchema.optional(),
    id: IdSchema.optional(),
  })
  .strict();

const RenameTabSchema = z
  .object({ title: TitleSchema, tenantId: TenantIdSchema.optional() })
  .strict();

const ForkTabSchema = z
  .object({
    tenantId: TenantIdSchema,
    parentTabId: IdSchema,
    atSeq: z.number().int().nonnegative(),
    title: TitleSchema.optional(),
    id: IdSchema.optional(),
  })
  .strict();

const ListForksSchema = z
  .object({
    tenantId: TenantIdSchema.optional(),
    limit: z.number().int().min(1).max(maxPageLimit),
    cursor: z.string().optional(),
  })
  .strict();

const ListTabsSchema = z
  .object({ limit: z.number().int().min(1).max(maxPageLimit), cursor: z.string().optional() })
  .strict();

/** A listing page of `limit` tabs from `limit + 1` rows in position order, and its cursor. */
function tabPage(rows: TabRow[], limit: number): { tabs: Tab[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    tabs: page.map(tabFromRow),
    nextCursor:
      rows.length > limit && last !== undefined ? encodeTabCursor(Number(last.position)) : null,
  };
}

export function createSqlTabStore(run: RunStatement): TabStore {
  const store: TabStore = {
    async createTab(input) {
      const parsed = parse(CreateTabSchema, input, 'tab');
      // The parent must be a tab of the same tenant; otherwise nothing is inserted.
      const rows = await run<TabRow>(
        'create tab',
        `INSERT INTO tabs AS t (id, tenant_id, title, config, parent_tab_id)
         SELECT coalesce($5::uuid, gen_random_uuid()), $1, $2, $3::jsonb, $4::uuid
         WHERE $4::uuid IS NULL
           OR EXISTS (SELECT 1 FROM tabs p WHERE p.id = $4::uuid AND p.tenant_id = $1)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${tabColumns}`,
        [
          parsed.tenantId,
          parsed.title ?? '',
          JSON.stringify(parsed.config ?? {}),
          parsed.parentTabId ?? null,
          parsed.id ?? null,
        ],
      );
      const row = rows[0];
      if (row !== undefined) return tabFromRow(row);
      if (parsed.id !== undefined) {
        // Not found: the id is another tenant's tab, which this tenant cannot create nor see.
        return store.getTab(parsed.id, { tenantId: parsed.tenantId });
      }
      throw new NotFoundError(`parent tab ${parsed.parentTabId} not found`);
    },

    async forkTab(input) {
      const parsed = parse(ForkTabSchema, input, 'fork');
      const [row] = await run<{ id: string }>(
        'fork tab',
        'SELECT chunklog_fork($1, $2, $3, $4, $5) AS id',
        [
          parsed.parentTabId,
          parsed.tenantId,
          parsed.atSeq,
          parsed.id ?? null,
          parsed.title ?? null,
        ],
      );
      if (row === undefined) throw new NotFoundError(`tab ${parsed.parentTabId} not found`);
      // A replayed id of another tenant's tab is not found, as for createTab.
      return store.getTab(row.id, { tenantId: parsed.tenantId });
    },

    async listForks(tabId, options) {
      const id = requireTabId(tabId);
      const { limit, cursor, tenantId } = parse(ListForksSchema, options, 'listing options');
      await store.getTab(id, tenantId === undefined ? {} : { tenantId });
      const position = cursor === undefined ? null : decodeTabCursor(cursor);
      const rows = await run<TabRow>(
        'list forks',
        `SELECT ${tabColumns} FROM tabs t WHERE t.fork_of = $1
           AND ($3::bigint IS NULL OR t.position < $3)
         ORDER BY t.position DESC LIMIT $2`,
        [id, limit + 1, position],
      );
      return tabPage(rows, limit);
    },

    async getTab(tabId, options) {
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
    },

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
      return tabPage(rows, limit);
    },

    async countTabs(tenantId, upTo) {
      const tenant = parse(TenantIdSchema, tenantId, 'tenant id');
      const bound = parse(z.number().int().min(0), upTo, 'count bound');
      const rows = await run<{ count: number | string }>(
        'count tabs',
        'SELECT count(*) AS count FROM (SELECT 1 FROM tabs WHERE tenant_id = $1 LIMIT $2) AS t',
        [tenant, bound],
      );
      return Number(rows[0]?.count ?? 0);
    },

    async renameTab(tabId, input) {
      const id = requireTabId(tabId);
      const { title, tenantId } = parse(RenameTabSchema, input, 'rename');
      const rows = await run<TabRow>(
        'rename tab',
        `UPDATE tabs AS t SET title = $2, updated_at = now()
         WHERE t.id = $1 AND ($3::text IS NULL OR t.tenant_id = $3)
         RETURNING ${tabColumns}`,
        [id, title, tenantId ?? null],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      return tabFromRow(row);
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

    async tabTenantName(tabId) {
      if (!IdSchema.safeParse(tabId).success) return null;
      const rows = await run<{ name: string }>(
        'tab tenant name',
        'SELECT n.name FROM tabs t JOIN tenants n ON n.id = t.tenant_id WHERE t.id = $1',
        [tabId],
        'chunklog_tab_tenant_name',
      );
      return rows[0]?.name ?? null;
    },
  };
  return store;
}
