import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFolder } from '../migrations/migrations-folder';
import { createPgliteStore } from './create-pglite-store';
import { pgliteTemplateName, seedFromTemplate } from './pglite-template';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'chunklog-pglite-template-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const neverMake = async () => {
  throw new Error('the template was made again');
};

describe('createPgliteStore with a templates folder', () => {
  it('starts each new data folder as a copy of one migrated template, made once', async () => {
    const templatesFolder = join(scratch, 'templates');
    const first = createPgliteStore({ dataDir: join(scratch, 'first'), templatesFolder });
    await first.migrate();
    const tenant = await first.createTenant({ name: 'local' });
    await first.createTab({ tenantId: tenant.id, title: 'only in the first folder' });
    await first.close();
    expect(readdirSync(templatesFolder)).toEqual([pgliteTemplateName(migrationsFolder)]);

    const secondDir = join(scratch, 'second');
    expect(
      await seedFromTemplate({
        dataDir: secondDir,
        templatesFolder,
        migrationsFolder,
        makeTemplate: neverMake,
      }),
    ).toBe(true);
    const second = createPgliteStore({ dataDir: secondDir, templatesFolder });
    await second.migrate();
    const sameTenant = await second.createTenant({ name: 'local' });
    expect((await second.listTabs(sameTenant.id, { limit: 10 })).tabs).toEqual([]);
    await second.close();
    // Three PGlite starts (the template's initdb and two copies): slow on a loaded machine.
  }, 240_000);

  it('leaves a folder that already holds a database as it is', async () => {
    const templatesFolder = join(scratch, 'templates');
    expect(
      await seedFromTemplate({
        dataDir: join(scratch, 'first'),
        templatesFolder,
        migrationsFolder,
        makeTemplate: neverMake,
      }),
    ).toBe(false);
  });

  it('tells why when there can be no template, and the folder runs initdb instead', async () => {
    const notAFolder = join(scratch, 'a-file');
    writeFileSync(notAFolder, '');
    const errors: unknown[] = [];
    const store = createPgliteStore({
      dataDir: join(scratch, 'without-template'),
      templatesFolder: join(notAFolder, 'templates'),
      onTemplateError: (error) => errors.push(error),
    });
    await store.migrate();
    expect(await store.createTenant({ name: 'local' })).toMatchObject({ name: 'local' });
    await store.close();
    expect(errors).toEqual([expect.objectContaining({ code: 'ENOTDIR' })]);
  }, 180_000);
});

describe('seedFromTemplate and abandoned making-folders', () => {
  /** A process that has ended: its pid is free (and too recent to be reused yet). */
  async function endedPid(): Promise<number> {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    return child.pid!;
  }

  it("removes the making-folders of processes that are gone, never a live process's", async () => {
    const templatesFolder = join(scratch, 'abandoned');
    const template = pgliteTemplateName(migrationsFolder);
    const living = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    try {
      const dead = [await endedPid(), await endedPid()];
      const abandoned = dead.map((pid, index) => `${template}.making-${pid}-0a1b2c3${index}`);
      // An older template's leftover is abandoned all the same.
      abandoned.push(`pglite-0123456789abcdef.making-${dead[0]}-ffffffff`);
      const alive = [
        `${template}.making-${living.pid}-deadbeef`,
        `${template}.making-${process.pid}-cafef00d`,
      ];
      const unrelated = ['notes.making-later', 'pglite-0123456789abcdef'];
      for (const name of [...abandoned, ...alive, ...unrelated]) {
        mkdirSync(join(templatesFolder, name, 'base'), { recursive: true });
      }

      let made = 0;
      expect(
        await seedFromTemplate({
          dataDir: join(scratch, 'abandoned-data'),
          templatesFolder,
          migrationsFolder,
          async makeTemplate(folder) {
            made++;
            mkdirSync(folder, { recursive: true });
            writeFileSync(join(folder, 'PG_VERSION'), '17\n');
          },
        }),
      ).toBe(true);
      expect(made).toBe(1);
      expect(readdirSync(templatesFolder).sort()).toEqual(
        [template, ...alive, ...unrelated].sort(),
      );

      // Looking the template up (no making) removes a folder abandoned since.
      const later = `${template}.making-${await endedPid()}-12345678`;
      mkdirSync(join(templatesFolder, later));
      expect(
        await seedFromTemplate({
          dataDir: join(scratch, 'abandoned-data-2'),
          templatesFolder,
          migrationsFolder,
          makeTemplate: neverMake,
        }),
      ).toBe(true);
      expect(readdirSync(templatesFolder)).not.toContain(later);
      expect(readdirSync(templatesFolder)).toEqual(expect.arrayContaining(alive));
    } finally {
      living.kill();
    }
  });
});

describe('pgliteTemplateName', () => {
  it('changes with the content of any migration file', () => {
    const copy = join(scratch, 'migrations');
    cpSync(migrationsFolder, copy, { recursive: true });
    expect(pgliteTemplateName(copy)).toBe(pgliteTemplateName(migrationsFolder));
    const sql = readdirSync(copy).find((name) => name.endsWith('.sql'))!;
    appendFileSync(join(copy, sql), '\n-- changed\n');
    expect(pgliteTemplateName(copy)).not.toBe(pgliteTemplateName(migrationsFolder));
  });
});
