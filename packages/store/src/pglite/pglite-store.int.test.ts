import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeChunkStoreContract, textChunk } from '../testing';
import { createPgliteStore } from './create-pglite-store';

// PGlite runs every query on one embedded connection, so the many-tabs load is lighter here
// (100 tabs, 10 appends per writer) than on the real Postgres; every other case is the same.
describeChunkStoreContract('PGlite (in memory)', {
  async open({ metricsRegistry }) {
    const store = createPgliteStore({ metricsRegistry });
    return { store, dispose: () => store.close() };
  },
  scale: { tabs: 100, appendsPerWriter: 10, propertyRuns: 10 },
});

describe('createPgliteStore with a data folder', () => {
  it('keeps tabs and chunks across a close and reopen', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'chunklog-pglite-'));
    try {
      const first = createPgliteStore({ dataDir });
      await first.migrate();
      const tenant = await first.createTenant({ name: 'local' });
      const tab = await first.createTab({ tenantId: tenant.id, title: 'kept' });
      const chunk = textChunk(tab.id, 'still here');
      await first.append(tab.id, [chunk]);
      await first.close();

      const second = createPgliteStore({ dataDir });
      await second.migrate();
      expect((await second.getTab(tab.id)).title).toBe('kept');
      const page = await second.page(tab.id, { limit: 10 });
      expect(page.chunks.map((chunk) => [chunk.id, chunk.seq, chunk.data])).toEqual([
        [chunk.id, 1, { text: 'still here' }],
      ]);
      await second.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
