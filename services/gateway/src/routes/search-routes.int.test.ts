import { randomUUID } from 'node:crypto';
import type { ChunkPage, NewChunk, SearchPage } from '@chunklog/chunk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedError } from '../testing/expected-error';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { everyBackend } from '../testing/test-backends';

const backends = await everyBackend();

function userText(tabId: string, text: string): NewChunk {
  return {
    id: randomUUID(),
    tabId,
    turnId: randomUUID(),
    step: 0,
    role: 'user',
    type: 'text',
    data: { text },
  };
}

type AroundPage = ChunkPage & { hasMoreBefore: boolean; hasMoreAfter: boolean };

describe.each(backends)('search and pages around a seq on $name', (backend) => {
  let gateway: GatewayHarness;
  let tabA: string;
  let tabB: string;

  beforeAll(async () => {
    gateway = await startGateway(backend);
    tabA = await gateway.createTab();
    tabB = await gateway.createTab(gateway.tenantB);
    const chunks = Array.from({ length: 30 }, (_, index) =>
      userText(tabA, index === 11 ? 'the albatross query <b>' : `filler number ${index + 1}`),
    );
    await gateway.backend.store.append(tabA, chunks);
    await gateway.backend.store.append(tabB, [userText(tabB, 'albatross of tenant b')]);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const search = (query: string, key?: string) =>
    gateway.request('GET', `/v1/search?${query}`, { key });

  it("finds the tenant's chunk, with its tab, seq and an escaped, marked snippet", async () => {
    const response = await search('q=albatross+query');
    expect(response.status).toBe(200);
    const page = response.body as SearchPage;
    expect(page.hits).toEqual([
      expect.objectContaining({
        kind: 'chunk',
        tabId: tabA,
        tabTitle: 'test',
        seq: 12,
        role: 'user',
        type: 'text',
        snippet: expect.stringMatching(/^the <mark>albatross<\/mark> <mark>query<\/mark>\s*$/),
      }),
    ]);
    const other = (await search('q=albatross', gateway.tenantB.key)).body as SearchPage;
    expect(other.hits.map((hit) => hit.tabId)).toEqual([tabB]);
  });

  it('pages with a cursor and filters by tab, role and type', async () => {
    const first = (await search('q=filler&limit=20')).body as SearchPage;
    expect(first.hits).toHaveLength(20);
    const second = (await search(`q=filler&limit=20&cursor=${first.nextCursor}`))
      .body as SearchPage;
    expect(second.hits).toHaveLength(9);
    expect(second.nextCursor).toBeNull();
    const seqs = [...first.hits, ...second.hits].map((hit) => hit.seq);
    expect(new Set(seqs).size).toBe(29);
    expect(((await search(`q=filler&role=assistant`)).body as SearchPage).hits).toEqual([]);
    expect(((await search(`q=filler&type=thinking`)).body as SearchPage).hits).toEqual([]);
    expect(((await search(`q=filler&tabId=${tabA}&limit=1`)).body as SearchPage).hits).toHaveLength(
      1,
    );
  });

  it('answers 400 with the reason for a bad query, 404 for a tab of another tenant, 401 without a key', async () => {
    for (const [query, reason] of [
      ['', /\/q/],
      ['q=', /empty/],
      ['q=%20%20', /empty/],
      [`q=${'x'.repeat(501)}`, /longer than 500/],
      ['q=%21%21%21', /no searchable words/],
      ['q=a&limit=0', /limit/],
      ['q=a&role=robot', /role/],
      ['q=a&cursor=garbage', /cursor/],
      ['q=a&from=20&to=10', /from/],
      ['q=a&tabId=not-a-uuid', /tabId/],
    ] as const) {
      const response = await search(query);
      expect(response.status, query).toBe(400);
      expect(response.body).toEqual(expectedError('invalid_input'));
      expect((response.body as { error: { message: string } }).error.message).toMatch(reason);
    }
    expect((await search(`q=albatross&tabId=${tabB}`)).status).toBe(404);
    expect((await gateway.request('GET', '/v1/search?q=albatross', { key: null })).status).toBe(
      401,
    );
  });

  it('reads the page centred on a seq, full at both ends of the tab', async () => {
    const around = async (seq: number, limit: number) => {
      const response = await gateway.request(
        'GET',
        `/v1/tabs/${tabA}/chunks?around=${seq}&limit=${limit}`,
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const page = response.body as AroundPage;
      return { ...page, seqs: page.chunks.map((chunk) => chunk.seq) };
    };
    const middle = await around(12, 5);
    expect(middle.seqs).toEqual([10, 11, 12, 13, 14]);
    expect(middle).toMatchObject({
      total: 30,
      hasMore: true,
      hasMoreBefore: true,
      hasMoreAfter: true,
    });
    const start = await around(1, 6);
    expect(start.seqs).toEqual([1, 2, 3, 4, 5, 6]);
    expect(start).toMatchObject({ hasMoreBefore: false, hasMoreAfter: true });
    const end = await around(30, 6);
    expect(end.seqs).toEqual([25, 26, 27, 28, 29, 30]);
    expect(end).toMatchObject({ hasMoreBefore: true, hasMoreAfter: false });
    const whole = await around(15, 100);
    expect(whole.seqs).toEqual(Array.from({ length: 30 }, (_, index) => index + 1));
    expect(whole).toMatchObject({ hasMore: false, hasMoreBefore: false, hasMoreAfter: false });
    const one = await around(7, 1);
    expect(one.seqs).toEqual([7]);

    const exclusive = await gateway.request('GET', `/v1/tabs/${tabA}/chunks?around=3&before=9`);
    expect(exclusive.status).toBe(400);
    const foreign = await gateway.request('GET', `/v1/tabs/${tabB}/chunks?around=1`);
    expect(foreign.status).toBe(404);
  });
});
