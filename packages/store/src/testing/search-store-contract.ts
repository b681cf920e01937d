/** The contract of full-text search, part of the ChunkStore contract suite (both adapters). */
import { randomUUID } from 'node:crypto';
import { InvalidInputError, type NewChunk, NotFoundError } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import type { ChunkStore } from '../chunk-store';
import { rejection } from './rejection';

function text(tabId: string, words: string, role: 'user' | 'assistant' = 'user'): NewChunk {
  return {
    id: randomUUID(),
    tabId,
    turnId: randomUUID(),
    step: 0,
    role,
    type: 'text',
    data: { text: words },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function describeSearchStoreContract(storeOf: () => ChunkStore): void {
  describe('search', () => {
    async function newTab(title = 'a tab', tenantId?: string) {
      const tenant = tenantId ?? (await storeOf().createTenant({ name: `t-${randomUUID()}` })).id;
      const tab = await storeOf().createTab({ tenantId: tenant, title });
      return { tenant, tab };
    }

    it('ranks the chunk that says the words most first, and gives each hit its place', async () => {
      const store = storeOf();
      const { tenant, tab } = await newTab('planning');
      const [once, unrelated, often] = await store.append(tab.id, [
        text(tab.id, 'the invoice query ran once among many other words of a long sentence'),
        text(tab.id, 'nothing to see here'),
        text(tab.id, 'invoice query: the invoice query joins invoice lines', 'assistant'),
      ]);
      const page = await store.search(tenant, { q: 'invoice query', limit: 10 });
      expect(page.hits.map((hit) => hit.chunkId)).toEqual([often!.id, once!.id]);
      expect(page.hits.map((hit) => hit.chunkId)).not.toContain(unrelated!.id);
      expect(page.hits[0]).toEqual({
        kind: 'chunk',
        tabId: tab.id,
        tabTitle: 'planning',
        seq: 3,
        chunkId: often!.id,
        role: 'assistant',
        type: 'text',
        createdAt: often!.createdAt,
        snippet: expect.stringContaining('<mark>invoice</mark> <mark>query</mark>'),
      });
      expect(page.nextCursor).toBeNull();
    });

    it('escapes the snippet and marks only the matched words', async () => {
      const store = storeOf();
      const { tenant, tab } = await newTab();
      await store.append(tab.id, [text(tab.id, 'if x < y && it\'s "marmalade" > z')]);
      const [hit] = (await store.search(tenant, { q: 'marmalade', limit: 5 })).hits;
      expect(hit?.snippet).toContain(
        '&lt; y &amp;&amp; it&#39;s &quot;<mark>marmalade</mark>&quot; &gt;',
      );
      // The only tags left are the marks.
      expect(hit?.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>"']/);
    });

    it('searches thinking, tool inputs and results, and tab titles', async () => {
      const store = storeOf();
      const { tenant, tab } = await newTab('quokka notes');
      const turnId = randomUUID();
      await store.append(tab.id, [
        {
          id: randomUUID(),
          tabId: tab.id,
          turnId,
          step: 0,
          role: 'assistant',
          type: 'thinking',
          data: { text: 'the quokka lives on an island', signature: 's' },
        },
        {
          id: randomUUID(),
          tabId: tab.id,
          turnId,
          step: 0,
          role: 'assistant',
          type: 'tool_call',
          data: { callId: 'c1', name: 'run_sql', arguments: { sql: 'SELECT *\nFROM quokka' } },
        },
        {
          id: randomUUID(),
          tabId: tab.id,
          turnId,
          step: 0,
          role: 'tool',
          type: 'tool_result',
          data: { callId: 'c1', name: 'run_sql', result: { rows: ['quokka'] }, isError: false },
        },
      ]);
      const page = await store.search(tenant, { q: 'quokka', limit: 10 });
      expect(page.hits.map((hit) => hit.type ?? hit.kind).sort()).toEqual([
        'thinking',
        'title',
        'tool_call',
        'tool_result',
      ]);
      const title = page.hits.find((hit) => hit.kind === 'title');
      expect(title).toMatchObject({ tabId: tab.id, seq: null, chunkId: null, role: null });
      expect(title?.snippet).toBe('<mark>quokka</mark> notes');
      // A word that follows an escaped newline in a tool input is a word of its own.
      expect((await store.search(tenant, { q: 'from', limit: 10 })).hits).toHaveLength(1);
      const byType = await store.search(tenant, { q: 'quokka', type: 'tool_call', limit: 10 });
      expect(byType.hits.map((hit) => hit.type)).toEqual(['tool_call']);
      const byRole = await store.search(tenant, { q: 'quokka', role: 'tool', limit: 10 });
      expect(byRole.hits.map((hit) => hit.type)).toEqual(['tool_result']);
    });

    it("never shows another tenant's chunks, and a tab of another tenant is not found", async () => {
      const store = storeOf();
      const mine = await newTab();
      const theirs = await newTab('wombat');
      await store.append(mine.tab.id, [text(mine.tab.id, 'wombat burrow')]);
      await store.append(theirs.tab.id, [text(theirs.tab.id, 'wombat burrow')]);
      const page = await store.search(mine.tenant, { q: 'wombat', limit: 10 });
      expect(page.hits.map((hit) => hit.tabId)).toEqual([mine.tab.id]);
      expect(
        await rejection(
          store.search(mine.tenant, { q: 'wombat', tabId: theirs.tab.id, limit: 10 }),
        ),
      ).toBeInstanceOf(NotFoundError);
    });

    it('filters by tab and by creation time', async () => {
      const store = storeOf();
      const { tenant, tab } = await newTab();
      const other = await newTab('other', tenant);
      const [early] = await store.append(tab.id, [text(tab.id, 'pelican one')]);
      await sleep(15);
      const [late] = await store.append(tab.id, [text(tab.id, 'pelican two')]);
      const [elsewhere] = await store.append(other.tab.id, [text(other.tab.id, 'pelican three')]);
      const ids = async (options: { tabId?: string; from?: number; to?: number }) =>
        (await store.search(tenant, { q: 'pelican', limit: 10, ...options })).hits
          .map((hit) => hit.chunkId)
          .sort();
      expect(await ids({ tabId: other.tab.id })).toEqual([elsewhere!.id]);
      expect(await ids({ tabId: tab.id, from: late!.createdAt })).toEqual([late!.id]);
      expect(await ids({ tabId: tab.id, to: late!.createdAt })).toEqual([early!.id]);
    });

    it('pages through the hits with a cursor, in rank order, each once', async () => {
      const store = storeOf();
      const { tenant, tab } = await newTab();
      await store.append(
        tab.id,
        Array.from({ length: 7 }, (_, index) =>
          text(tab.id, `${'heron '.repeat(index + 1)}and ${'filler '.repeat(7 - index)}`),
        ),
      );
      const whole = await store.search(tenant, { q: 'heron', limit: 100 });
      expect(whole.hits).toHaveLength(7);
      const seen: Array<number | null> = [];
      let cursor: string | undefined;
      do {
        const page = await store.search(tenant, { q: 'heron', limit: 3, cursor });
        seen.push(...page.hits.map((hit) => hit.seq));
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      expect(seen).toEqual(whole.hits.map((hit) => hit.seq));
      expect(seen[0]).toBe(7);
    });

    it('reads web search syntax: phrases and excluded words', async () => {
      const store = storeOf();
      const { tenant, tab } = await newTab();
      const [red, blue] = await store.append(tab.id, [
        text(tab.id, 'red kite over the hill'),
        text(tab.id, 'the hill under a blue kite'),
      ]);
      const ids = async (q: string) =>
        (await store.search(tenant, { q, limit: 10 })).hits.map((hit) => hit.chunkId);
      expect(await ids('"red kite"')).toEqual([red!.id]);
      expect(await ids('kite -blue')).toEqual([red!.id]);
      expect((await ids('kite')).sort()).toEqual([red!.id, blue!.id].sort());
    });

    it('forgets the chunks of a deleted or cleared tab', async () => {
      const store = storeOf();
      const { tenant, tab } = await newTab('ibis');
      const cleared = await newTab('cleared', tenant);
      await store.append(tab.id, [text(tab.id, 'ibis')]);
      await store.append(cleared.tab.id, [text(cleared.tab.id, 'ibis')]);
      expect((await store.search(tenant, { q: 'ibis', limit: 10 })).hits).toHaveLength(3);
      await store.deleteTab(tab.id, { tenantId: tenant });
      await store.clearTab(cleared.tab.id);
      expect((await store.search(tenant, { q: 'ibis', limit: 10 })).hits).toEqual([]);
    });

    it('refuses an empty, too long or wordless query and a malformed cursor', async () => {
      const store = storeOf();
      const { tenant } = await newTab();
      for (const q of ['', '   ', 'x'.repeat(501), '!!! ""', 'a\u0000b']) {
        expect(await rejection(store.search(tenant, { q, limit: 10 }))).toBeInstanceOf(
          InvalidInputError,
        );
      }
      expect(
        await rejection(store.search(tenant, { q: 'kite', limit: 10, cursor: 'nope' })),
      ).toBeInstanceOf(InvalidInputError);
      expect(await rejection(store.search(tenant, { q: 'kite', limit: 0 }))).toBeInstanceOf(
        InvalidInputError,
      );
    });
  });
}
