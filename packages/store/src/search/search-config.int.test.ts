import { createTestDatabase, testPostgresUrl } from '@chunklog/test-infra';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ChunkStore } from '../chunk-store';
import { createPgliteStore } from '../pglite/create-pglite-store';
import { createPostgresStore } from '../postgres/create-postgres-store';
import { textChunk } from '../testing';

const adminUrl = await testPostgresUrl();

/** A stemming configuration finds other forms of a word, through an index migrate() built. */
async function expectEnglishSearch(store: ChunkStore): Promise<void> {
  await store.migrate();
  await store.migrate();
  const tenant = await store.createTenant({ name: 'english' });
  const tab = await store.createTab({ tenantId: tenant.id, title: 'x' });
  const [chunk] = await store.append(tab.id, [textChunk(tab.id, 'she was running the queries')]);
  const page = await store.search(tenant.id, { q: 'run query', limit: 10 });
  expect(page.hits.map((hit) => hit.chunkId)).toEqual([chunk!.id]);
  expect(page.hits[0]?.snippet).toBe('she was <mark>running</mark> the <mark>queries</mark>');
}

describe('SEARCH_TEXT_CONFIG (the store’s searchConfig)', () => {
  it('searches PGlite with english, indexed at migrate', async () => {
    const store = createPgliteStore({ searchConfig: 'english' });
    try {
      await expectEnglishSearch(store);
    } finally {
      await store.close();
    }
  }, 60_000);

  it.skipIf(adminUrl === null)(
    'searches Postgres with english, its index built concurrently at migrate',
    async () => {
      const database = await createTestDatabase(adminUrl!);
      const store = createPostgresStore({ url: database.url, searchConfig: 'english' });
      try {
        await expectEnglishSearch(store);
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        const { rows } = await client
          .query<{ valid: boolean }>(
            `SELECT i.indisvalid AS valid FROM pg_index i
             WHERE i.indexrelid = 'chunks_search_english_index'::regclass`,
          )
          .finally(() => client.end());
        expect(rows).toEqual([{ valid: true }]);
      } finally {
        await store.close();
        await database.drop();
      }
    },
    60_000,
  );

  it('refuses a configuration name that is not an identifier', () => {
    expect(() => createPgliteStore({ searchConfig: "simple'; drop table chunks; --" })).toThrow();
  });
});
