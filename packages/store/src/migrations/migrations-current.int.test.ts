import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteStore } from '../pglite/create-pglite-store';
import type { SqlClient } from '../sql-client';
import { migrationsCurrent } from './migrations-current';
import { migrationsFolder } from './migrations-folder';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'chunklog-migrations-current-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function clientOf(database: PGlite): SqlClient {
  return {
    async query<Row extends Record<string, unknown>>(text: string, values?: unknown[]) {
      return (await database.query<Row>(text, values)).rows;
    },
  };
}

/** A copy of the committed migrations with one more, newer than all of them. */
function folderWithOneMore(): string {
  const folder = join(scratch, 'migrations-plus-one');
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as {
    entries: Array<{
      idx: number;
      version: string;
      when: number;
      tag: string;
      breakpoints: boolean;
    }>;
  };
  const last = journal.entries.at(-1)!;
  journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1, tag: '9999_probe' });
  writeFileSync(journalPath, JSON.stringify(journal));
  writeFileSync(join(folder, '9999_probe.sql'), 'CREATE TABLE "migration_probe" ("id" integer);');
  return folder;
}

describe('migrationsCurrent', () => {
  it('is false without drizzle’s table, true once migrated', async () => {
    const database = new PGlite();
    try {
      expect(await migrationsCurrent(clientOf(database), migrationsFolder)).toBe(false);
      const store = createPgliteStore({ dataDir: join(scratch, 'migrated') });
      await store.migrate();
      await store.close();
      const migrated = new PGlite(join(scratch, 'migrated'));
      try {
        expect(await migrationsCurrent(clientOf(migrated), migrationsFolder)).toBe(true);
      } finally {
        await migrated.close();
      }
    } finally {
      await database.close();
    }
  }, 120_000);

  it('is false when the folder holds a newer migration, which migrate() then applies', async () => {
    const dataDir = join(scratch, 'behind');
    const first = createPgliteStore({ dataDir });
    await first.migrate();
    await first.close();

    const folder = folderWithOneMore();
    const behind = new PGlite(dataDir);
    try {
      expect(await migrationsCurrent(clientOf(behind), folder)).toBe(false);
    } finally {
      await behind.close();
    }

    const second = createPgliteStore({ dataDir, migrationsFolder: folder });
    await second.migrate();
    await second.close();
    const after = new PGlite(dataDir);
    try {
      expect(await migrationsCurrent(clientOf(after), folder)).toBe(true);
      const [probe] = (
        await after.query<{ present: boolean }>(
          `select to_regclass('migration_probe') is not null as present`,
        )
      ).rows;
      expect(probe?.present).toBe(true);
    } finally {
      await after.close();
    }
  }, 120_000);
});
