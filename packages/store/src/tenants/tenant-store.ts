import { ConflictError } from '@chunklog/chunk-core';
import { z } from 'zod';
import { parse, TenantIdSchema } from '../input';
import { retryOnceWhenEmpty } from '../retry-once-when-empty';
import type { RunStatement } from '../sql-client';
import { hashApiKey } from './hash-api-key';

/** Tenants and the API keys that authenticate them. */
export interface TenantStore {
  /** Idempotent: the tenant of that name (and id, when given) whether it existed or not. */
  createTenant(input: { name: string; id?: string }): Promise<{ id: string; name: string }>;
  /** Stores the hash of an API key for a tenant (the key itself is never stored). */
  addApiKey(tenantId: string, key: string): Promise<void>;
  /** The tenant of an API key, or null. */
  authenticate(key: string): Promise<string | null>;
  /** A tenant's name (what API_KEYS and an MCP secret's tenant list call it), or null. */
  tenantName(tenantId: string): Promise<string | null>;
}

const CreateTenantSchema = z.object({
  name: z.string().min(1).max(200),
  id: TenantIdSchema.optional(),
});
const ApiKeySchema = z.string().min(1).max(1000);

export function createSqlTenantStore(run: RunStatement): TenantStore {
  return {
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

    async tenantName(tenantId) {
      if (!TenantIdSchema.safeParse(tenantId).success) return null;
      const rows = await run<{ name: string }>(
        'tenant name',
        'SELECT name FROM tenants WHERE id = $1',
        [tenantId],
        'chunklog_tenant_name',
      );
      return rows[0]?.name ?? null;
    },
  };
}
