import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase, testPostgresUrl } from '@chunklog/test-infra';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkStore } from '../chunk-store';
import { createPgliteStore } from '../pglite/create-pglite-store';
import { createPostgresStore } from '../postgres/create-postgres-store';
import { migrationsFolder } from './migrations-folder';

/**
 * A database made by an earlier release (the migrations before `firstNewTag`) and holding rows
 * upgrades in place: every later migration applies, and the store works on the old rows.
 */
const firstNewTag = '0002_cancel_generation';

const adminUrl = await testPostgresUrl();

interface JournalEntry {
  tag: string;
}

/** A copy of the migrations folder that stops before `firstNewTag`: the earlier release's. */
async function earlierMigrations(): Promise<{ folder: string; remove(): Promise<void> }> {
  const folder = await mkdtemp(join(tmpdir(), 'chunklog-migrations-'));
  const journal = JSON.parse(
    await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8'),
  ) as { entries: JournalEntry[] };
  const cut = journal.entries.findIndex((entry) => entry.tag === firstNewTag);
  expect(cut).toBeGreaterThan(0);
  const entries = journal.entries.slice(0, cut);
  await mkdir(join(folder, 'meta'));
  for (const entry of entries) {
    await cp(join(migrationsFolder, `${entry.tag}.sql`), join(folder, `${entry.tag}.sql`));
  }
  await writeFile(join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

/** The ids of what `seedOldRows` wrote. */
interface Seeded {
  tenantId: string;
  idleTab: string;
  runningTab: string;
  runningTurn: string;
  waiting: string;
}

/** Rows as the earlier release wrote them, through its SQL only (the new store code cannot). */
async function seedOldRows(
  query: (text: string, values?: unknown[]) => Promise<unknown>,
): Promise<Seeded> {
  const seeded: Seeded = {
    tenantId: `tenant-${randomUUID()}`,
    idleTab: randomUUID(),
    runningTab: randomUUID(),
    runningTurn: randomUUID(),
    waiting: randomUUID(),
  };
  await query('INSERT INTO tenants (id, name) VALUES ($1, $1)', [seeded.tenantId]);
  await query(
    `INSERT INTO tabs (id, tenant_id, title) VALUES ($1, $3, 'idle'), ($2, $3, 'running')`,
    [seeded.idleTab, seeded.runningTab, seeded.tenantId],
  );
  for (const tabId of [seeded.idleTab, seeded.runningTab]) {
    await query('SELECT * FROM chunklog_append($1, $2::jsonb, NULL)', [
      tabId,
      JSON.stringify([
        {
          id: randomUUID(),
          turnId: seeded.runningTurn,
          step: 0,
          role: 'user',
          type: 'text',
          data: { text: 'written before the upgrade' },
        },
      ]),
    ]);
  }
  // A turn in flight when the old worker stopped: its lease has lapsed, a takeover is due.
  await query(
    `UPDATE tabs SET status = 'running', active_turn_id = $2, lease_owner = 'old-worker',
       lease_expires_at = now() - interval '1 minute' WHERE id = $1`,
    [seeded.runningTab, seeded.runningTurn],
  );
  await query(
    `INSERT INTO inbox (chunk_id, tab_id, text, mode) VALUES ($1, $2, 'waiting', 'enqueue')`,
    [seeded.waiting, seeded.idleTab],
  );
  return seeded;
}

/**
 * During a rolling deploy a worker of the previous release still takes messages in, with its
 * own SQL (no stamp): the message must get the tab's cancel generation as it stands, as an
 * unstamped message does through the new store, never 0, which every cancel the tab ever had
 * would be above (its turn would be cancelled before the model saw it).
 */
async function expectPreviousWorkerIntakeStamped(
  store: ChunkStore,
  seeded: Seeded,
  query: (text: string, values?: unknown[]) => Promise<unknown>,
): Promise<void> {
  const { idleTab, tenantId } = seeded;
  const generation = await store.cancelGeneration(idleTab, { tenantId });
  expect(generation).toBeGreaterThan(0);
  const chunkId = randomUUID();
  await query(
    `INSERT INTO inbox (chunk_id, tab_id, text, mode)
     SELECT $1, $2, 'from the previous worker', 'interrupt'
     WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE id = $1)
     ON CONFLICT (chunk_id) DO NOTHING`,
    [chunkId, idleTab],
  );
  const stored = (await store.inboxList(idleTab)).find((message) => message.chunkId === chunkId);
  expect(stored?.cancelGeneration).toBe(generation);
}

/** What the upgraded store must make of the old rows. */
async function expectUpgraded(store: ChunkStore, seeded: Seeded): Promise<void> {
  const { tenantId, idleTab, runningTab, runningTurn, waiting } = seeded;
  // Old rows read with the new columns at their defaults.
  expect(await store.cancelGeneration(idleTab, { tenantId })).toBe(0);
  expect(await store.inboxList(idleTab)).toMatchObject([
    { chunkId: waiting, text: 'waiting', mode: 'enqueue', cancelGeneration: 0 },
  ]);
  expect(await store.getLease(runningTab)).toMatchObject({
    turnId: runningTurn,
    owner: 'old-worker',
    cancelGeneration: null,
  });
  expect(await store.tabsNeedingWork(10)).toEqual(expect.arrayContaining([idleTab, runningTab]));

  // The new operations work on them.
  expect(await store.requestCancel(idleTab, { tenantId })).toBe(1);
  expect(
    await store.inboxPut({
      tabId: idleTab,
      chunkId: randomUUID(),
      text: 'new',
      mode: 'interrupt',
      intakeSeq: 1,
    }),
  ).toBe(true);
  // The old row has no intake sequence: it was accepted first and stays first.
  expect((await store.inboxList(idleTab)).map((message) => message.cancelGeneration)).toEqual([
    0, 1,
  ]);
  const taken = await store.acquireLease(runningTab, {
    owner: 'new-worker',
    turnId: runningTurn,
    leaseMs: 30_000,
  });
  expect(taken.takenOver).toEqual({ turnId: runningTurn, owner: 'old-worker' });
  expect(
    await store.setTurnCancelGeneration(runningTab, { owner: 'new-worker', cancelGeneration: 0 }),
  ).toBe(true);
  expect((await store.getLease(runningTab))?.cancelGeneration).toBe(0);
  const [appended] = await store.append(
    runningTab,
    [
      {
        id: randomUUID(),
        tabId: runningTab,
        turnId: runningTurn,
        step: 0,
        role: 'assistant',
        type: 'text',
        data: { text: 'after the upgrade' },
      },
    ],
    { expectedSeq: 2 },
  );
  expect(appended?.seq).toBe(2);
  expect(
    await store.releaseLease(runningTab, {
      owner: 'new-worker',
      usage: {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      },
    }),
  ).toBe(true);
  expect(await store.getTab(runningTab)).toMatchObject({ status: 'idle', lastSeq: 2 });
}

describe('migrating a database made by the previous release, with rows in it', () => {
  let earlier: Awaited<ReturnType<typeof earlierMigrations>>;
  beforeAll(async () => {
    earlier = await earlierMigrations();
  });
  afterAll(async () => {
    await earlier?.remove();
  });

  it('upgrades a PGlite data folder in place', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'chunklog-pglite-upgrade-'));
    try {
      const old = new PGlite(dataDir);
      await migratePglite(drizzlePglite({ client: old }), { migrationsFolder: earlier.folder });
      const seeded = await seedOldRows((text, values) => old.query(text, values));
      await old.close();

      const store = createPgliteStore({ dataDir });
      try {
        await store.migrate();
        await expectUpgraded(store, seeded);
      } finally {
        await store.close();
      }
      // The store owns its PGlite: the previous worker's insert goes through a second opening.
      const raw = new PGlite(dataDir);
      try {
        const chunkId = randomUUID();
        await raw.query(
          `INSERT INTO inbox (chunk_id, tab_id, text, mode)
           VALUES ($1, $2, 'from the previous worker', 'interrupt')`,
          [chunkId, seeded.idleTab],
        );
        const stamped = await raw.query<{ cancel_generation: number | string }>(
          'SELECT cancel_generation FROM inbox WHERE chunk_id = $1',
          [chunkId],
        );
        // expectUpgraded left the tab at cancel generation 1.
        expect(Number(stamped.rows[0]?.cancel_generation)).toBe(1);
      } finally {
        await raw.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  describe('on Postgres', () => {
    let database: TestDatabase | null = null;
    afterAll(async () => {
      await database?.drop();
    });

    it.skipIf(adminUrl === null)('upgrades a database in place', async () => {
      database = await createTestDatabase(adminUrl!);
      const pool = new pg.Pool({ connectionString: database.url, max: 4 });
      // Idle clients killed when the database is dropped must not crash the test process.
      pool.on('error', () => {});
      try {
        await createPostgresStore({ pool, migrationsFolder: earlier.folder }).migrate();
        const seeded = await seedOldRows((text, values) => pool.query(text, values));
        const store = createPostgresStore({ pool });
        await store.migrate();
        await expectUpgraded(store, seeded);
        await expectPreviousWorkerIntakeStamped(store, seeded, (text, values) =>
          pool.query(text, values),
        );
        const applied = await pool.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM drizzle.__drizzle_migrations',
        );
        const journal = JSON.parse(
          await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8'),
        ) as { entries: unknown[] };
        expect(applied.rows[0]!.count).toBe(journal.entries.length);
      } finally {
        await pool.end();
      }
    });
  });
});
