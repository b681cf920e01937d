import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type PgliteThread, startPgliteThread } from './pglite-thread';

describe('startPgliteThread', () => {
  const started: PgliteThread[] = [];
  const start = () => {
    const thread = startPgliteThread();
    started.push(thread);
    return thread;
  };
  afterEach(async () => {
    await Promise.all(started.splice(0).map((thread) => thread.close()));
  });

  it('answers statements once opened, values and rows crossing the thread intact', async () => {
    const thread = start();
    await thread.open({ settings: { shared_buffers: '16MB' } });
    const at = new Date('2026-01-02T03:04:05.678Z');
    const rows = await thread.query<{ n: number; at: Date; doc: unknown; setting: string }>(
      `select $1::int + 1 as n, $2::timestamptz as at, $3::jsonb as doc,
              current_setting('shared_buffers') as setting`,
      [41, at, JSON.stringify({ nested: ['a', 1] })],
    );
    expect(rows).toEqual([{ n: 42, at, doc: { nested: ['a', 1] }, setting: '16MB' }]);
  });

  it('runs a transaction whole or not at all', async () => {
    const thread = start();
    await thread.open();
    await thread.transaction(['create table t (id int primary key)', 'insert into t values (1)']);
    await expect(
      thread.transaction(['insert into t values (2)', 'insert into t values (1)']),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await thread.query('select id from t order by id')).toEqual([{ id: 1 }]);
  });

  it("rejects with Postgres's own error: its message, SQLSTATE and fields", async () => {
    const thread = start();
    await thread.open();
    const error = await thread.query('select 1 from no_such_table').catch((caught) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: '42P01', severity: 'ERROR' });
    expect(error.message).toContain('no_such_table');
  });

  it('queues statements sent before the open behind it, in order', async () => {
    const thread = start();
    const opening = thread.open();
    const first = thread.query('create table q (n int)');
    const second = thread.query('insert into q values (1), (2) returning n');
    await opening;
    await first;
    expect(await second).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('says why a folder cannot be opened, and every statement after says the same', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'chunklog-pglite-thread-'));
    try {
      const notAFolder = join(folder, 'file');
      await writeFile(notAFolder, 'not a database');
      const thread = start();
      const opened = await thread.open({ dataDir: notAFolder }).catch((error) => error);
      expect(opened).toBeInstanceOf(Error);
      const query = await thread.query('select 1').catch((error) => error);
      expect(query).toBeInstanceOf(Error);
      expect(query.message).toBe(opened.message);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('refuses statements once closed', async () => {
    const thread = start();
    await thread.open();
    await thread.close();
    await expect(thread.query('select 1')).rejects.toThrow(/PGlite thread ended/);
  });

  it('refuses statements on a thread never opened', async () => {
    const thread = start();
    await expect(thread.query('select 1')).rejects.toThrow(/no database open/);
  });
});
