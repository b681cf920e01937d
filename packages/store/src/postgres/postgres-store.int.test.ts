import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '@chunklog/chunk-core';
import {
  createTestDatabase,
  sleep,
  type TestDatabase,
  testPostgresUrl,
} from '@chunklog/test-infra';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrationsFolder } from '../migrations/migrations-folder';
import { hashApiKey } from '../tenants/hash-api-key';
import { describeChunkStoreContract, textChunk } from '../testing';
import { createPostgresStore } from './create-postgres-store';

const adminUrl = await testPostgresUrl();

describe.skipIf(adminUrl === null)('Postgres adapter', () => {
  describeChunkStoreContract('Postgres (node-postgres pool)', {
    async open({ metricsRegistry }) {
      const database = await createTestDatabase(adminUrl!);
      const store = createPostgresStore({ url: database.url, maxConnections: 16, metricsRegistry });
      return {
        store,
        async dispose() {
          await store.close();
          await database.drop();
        },
      };
    },
    scale: { tabs: 1000, appendsPerWriter: 60, propertyRuns: 15 },
  });

  describe('storage details', () => {
    let database: TestDatabase;
    let pool: pg.Pool;

    beforeAll(async () => {
      database = await createTestDatabase(adminUrl!);
      pool = new pg.Pool({ connectionString: database.url, max: 8 });
      // Idle clients killed when the database is dropped must not crash the test process.
      pool.on('error', () => {});
    });
    afterAll(async () => {
      await pool.end();
      await database.drop();
    });

    it('migrates once when several services start at the same time', async () => {
      const stores = Array.from({ length: 4 }, () => createPostgresStore({ pool }));
      await Promise.all(stores.map((store) => store.migrate()));
      const applied = await pool.query(
        'SELECT count(*)::int AS count FROM drizzle.__drizzle_migrations',
      );
      const journal = JSON.parse(
        await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8'),
      ) as { entries: unknown[] };
      expect(journal.entries.length).toBeGreaterThan(0);
      expect(applied.rows[0].count).toBe(journal.entries.length);
      // A store on a borrowed pool leaves the pool open.
      await stores[0]!.close();
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    });

    it("reads a tab's tenant name in one statement", async () => {
      const store = createPostgresStore({ pool });
      await store.migrate();
      const tenant = await store.createTenant({ name: `named-${randomUUID()}` });
      const tab = await store.createTab({ tenantId: tenant.id });
      const statements = vi.spyOn(pool, 'query');
      try {
        expect(await store.tabTenantName(tab.id)).toBe(tenant.name);
        expect(statements).toHaveBeenCalledTimes(1);
      } finally {
        statements.mockRestore();
      }
    });

    it('stores only the sha256 of an api key', async () => {
      const store = createPostgresStore({ pool });
      await store.migrate();
      const tenant = await store.createTenant({ name: `hashing-${randomUUID()}` });
      const key = `secret-${randomUUID()}`;
      await store.addApiKey(tenant.id, key);
      const rows = await pool.query('SELECT key_hash FROM api_keys WHERE tenant_id = $1', [
        tenant.id,
      ]);
      expect(rows.rows).toEqual([{ key_hash: hashApiKey(key) }]);
      expect(JSON.stringify(rows.rows)).not.toContain(key);
    });

    it('leaves no chunk behind when a tab is deleted during appends', async () => {
      const store = createPostgresStore({ pool });
      await store.migrate();
      const tenant = await store.createTenant({ name: `orphans-${randomUUID()}` });
      const tab = await store.createTab({ tenantId: tenant.id });
      const append = () => store.append(tab.id, [textChunk(tab.id, 'racing a delete')]);
      await append();
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 10 }, append),
        store.deleteTab(tab.id),
        ...Array.from({ length: 10 }, append),
      ]);
      // Appends that lost the race fail as not found; none may leave a row for the gone tab.
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(NotFoundError);
      }
      expect(outcomes[10]!.status).toBe('fulfilled');
      const left = await pool.query('SELECT count(*)::int AS count FROM chunks WHERE tab_id = $1', [
        tab.id,
      ]);
      expect(left.rows[0].count).toBe(0);
    });

    it('keeps batches, direct chunklog_append calls, clears and deletes on the same tabs consistent', async () => {
      const store = createPostgresStore({ pool, appendLanes: 2 });
      await store.migrate();
      const tenant = await store.createTenant({ name: `race-${randomUUID()}` });
      const tabs = await Promise.all(
        Array.from({ length: 12 }, async () => (await store.createTab({ tenantId: tenant.id })).id),
      );
      const doomed = new Set(tabs.slice(0, 3));
      const told: Array<{ tabId: string; id: string; seq: number }> = [];
      /** Expected failures: appends to a tab that a racing delete removed. */
      const lostToDelete = (tabId: string, error: unknown) =>
        doomed.has(tabId) &&
        (error instanceof NotFoundError || (error as { code?: string }).code === 'CL404');

      /** `single`: one chunk per append, so its batches mostly take the distinct-tabs statement. */
      async function appender(direct: boolean, single = false) {
        const lastSeq = new Map<string, number>();
        for (let index = 0; index < 40; index += 1) {
          const tabId = tabs[Math.floor(Math.random() * tabs.length)]!;
          const count = single ? 1 : 1 + (index % 3);
          const chunks = Array.from({ length: count }, () => textChunk(tabId, 'racing'));
          try {
            const stored = direct
              ? (
                  await pool.query<{ id: string; seq: string }>(
                    'SELECT id, seq FROM chunklog_append($1, $2::jsonb, NULL)',
                    [tabId, JSON.stringify(chunks)],
                  )
                ).rows.map((row) => ({ id: row.id, seq: Number(row.seq) }))
              : await store.append(tabId, chunks);
            expect(stored.map((chunk) => chunk.id)).toEqual(chunks.map((chunk) => chunk.id));
            const seqs = stored.map((chunk) => chunk.seq);
            // Contiguous within one append, and above this caller's previous append to the tab.
            expect(seqs).toEqual(seqs.map((_, offset) => seqs[0]! + offset));
            expect(seqs[0]!).toBeGreaterThan(lastSeq.get(tabId) ?? 0);
            lastSeq.set(tabId, seqs.at(-1)!);
            for (const chunk of stored) told.push({ tabId, id: chunk.id, seq: chunk.seq });
          } catch (error) {
            if (!lostToDelete(tabId, error)) throw error;
          }
        }
      }

      async function clearer() {
        for (let index = 0; index < 8; index += 1) {
          await sleep(5);
          const tabId = tabs[3 + Math.floor(Math.random() * (tabs.length - 3))]!;
          await store.clearTab(tabId);
        }
      }

      async function deleter() {
        for (const tabId of doomed) {
          await sleep(10);
          await store.deleteTab(tabId);
        }
      }

      await Promise.all([
        ...Array.from({ length: 24 }, (_, index) => appender(false, index % 2 === 0)),
        ...Array.from({ length: 3 }, () => appender(true)),
        clearer(),
        deleter(),
      ]);

      const left = await pool.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM chunks WHERE tab_id = ANY ($1::uuid[])',
        [[...doomed]],
      );
      expect(left.rows[0]!.count).toBe(0);
      for (const tabId of tabs.filter((tab) => !doomed.has(tab))) {
        const floor = Number(
          (await pool.query('SELECT seq_floor FROM tabs WHERE id = $1', [tabId])).rows[0].seq_floor,
        );
        const stored = (
          await pool.query<{ id: string; seq: string }>(
            'SELECT id, seq FROM chunks WHERE tab_id = $1 ORDER BY seq',
            [tabId],
          )
        ).rows.map((row) => ({ id: row.id, seq: Number(row.seq) }));
        const mine = told.filter((chunk) => chunk.tabId === tabId);
        // No seq is ever given twice, cleared or not.
        expect(new Set(mine.map((chunk) => chunk.seq)).size).toBe(mine.length);
        // What survives the last clear is exactly what callers were told above its floor,
        // with the seqs they were told, gap-free.
        expect(stored).toEqual(
          mine
            .filter((chunk) => chunk.seq > floor)
            .sort((left, right) => left.seq - right.seq)
            .map(({ id, seq }) => ({ id, seq })),
        );
        expect(stored.map((chunk) => chunk.seq)).toEqual(
          stored.map((_, index) => floor + index + 1),
        );
      }
    });

    it('takes the tab advisory lock inside the append statement', async () => {
      const store = createPostgresStore({ pool });
      await store.migrate();
      const tenant = await store.createTenant({ name: `locking-${randomUUID()}` });
      const tab = await store.createTab({ tenantId: tenant.id });
      // Hold the tab's lock from another session: an append must wait for it, which proves
      // the append serializes on the same key the contract names.
      const holder = await pool.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock(chunklog_tab_lock_key($1))', [tab.id]);
        let settled = false;
        const append = store.append(tab.id, [textChunk(tab.id, 'waits')]).finally(() => {
          settled = true;
        });
        // Wait until the append's session is seen queued on that very advisory lock (rather
        // than sleeping): on a loaded machine a fixed sleep could end before the append even
        // reached the server, and the test would pass without proving anything.
        const deadline = Date.now() + 20_000;
        for (;;) {
          const waiting = await pool.query<{ count: number }>(
            `SELECT count(*)::int AS count FROM pg_locks
             WHERE locktype = 'advisory' AND NOT granted AND database = (
               SELECT oid FROM pg_database WHERE datname = current_database())
             AND ((classid::bigint << 32) | objid::bigint) =
               (SELECT chunklog_tab_lock_key($1::uuid))`,
            [tab.id],
          );
          if (waiting.rows[0]!.count === 1) break;
          if (Date.now() > deadline) throw new Error('the append never waited on the tab lock');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(settled).toBe(false);
        await holder.query('COMMIT');
        expect((await append)[0]!.seq).toBe(1);
      } finally {
        holder.release();
      }
    });
  });
});
