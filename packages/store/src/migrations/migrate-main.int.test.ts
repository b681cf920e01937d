import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createTestDatabase,
  freePort,
  type TestDatabase,
  testPostgresUrl,
} from '@chunklog/test-infra';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..', '..');
const adminUrl = await testPostgresUrl();

/** `npm run db:migrate`'s entry, as the script runs it. */
function migrate(databaseUrl: string) {
  return run('node', ['--import', 'tsx', 'packages/store/src/migrations/migrate-main.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

describe('db:migrate', () => {
  it('names the database and the cause in one line, with exit code 1, when it cannot connect', async () => {
    const port = await freePort();
    const result = await migrate(`postgres://postgres@127.0.0.1:${port}/nowhere`);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `db:migrate: could not migrate 127.0.0.1:${port}/nowhere: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  describe.skipIf(adminUrl === null)('on Postgres', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase(adminUrl!);
    });
    afterAll(async () => {
      await database?.drop();
    });

    it('applies every migration and says so', async () => {
      const result = await migrate(database.url);
      expect(result).toMatchObject({ code: 0, stdout: 'db:migrate: database is up to date\n' });
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const tables = await client.query<{ name: string }>(
          `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
        );
        expect(tables.rows.map((row) => row.name)).toEqual(
          expect.arrayContaining(['chunks', 'inbox', 'tabs', 'tenants']),
        );
      } finally {
        await client.end();
      }
    });
  });
});
