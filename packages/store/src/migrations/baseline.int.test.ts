import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFolder } from './migrations-folder';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..', '..');

describe('the committed migrations', () => {
  let copy: string;
  beforeAll(async () => {
    copy = await mkdtemp(join(tmpdir(), 'chunklog-baseline-'));
    await cp(migrationsFolder, copy, { recursive: true });
  });
  afterAll(async () => {
    await rm(copy, { recursive: true, force: true });
  });

  it("describe today's schema: drizzle-kit finds nothing in schema.ts to migrate", async () => {
    // drizzle-kit takes `--out` relative to the working folder.
    const { stdout, stderr } = await run(
      process.execPath,
      [
        join(root, 'node_modules', 'drizzle-kit', 'bin.cjs'),
        'generate',
        '--dialect',
        'postgresql',
        '--schema',
        'packages/store/src/schema.ts',
        '--out',
        relative(root, copy),
      ],
      { cwd: root },
    );
    expect(`${stdout}${stderr}`).toContain('No schema changes');
    expect(await readdir(copy)).toEqual(await readdir(migrationsFolder));
  });

  it('hold each SQL function once, as it is today: no later migration replaces or drops one', async () => {
    const files = (await readdir(migrationsFolder)).filter((name) => name.endsWith('.sql'));
    const sql = (
      await Promise.all(files.map((name) => readFile(join(migrationsFolder, name), 'utf8')))
    ).join('\n');
    const created = [...sql.matchAll(/CREATE FUNCTION (\w+)\(/g)].map((match) => match[1]);
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created).size).toBe(created.length);
    expect(sql).not.toMatch(/CREATE OR REPLACE FUNCTION|DROP FUNCTION|CREATE TRIGGER/);
  });
});
