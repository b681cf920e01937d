import type { Chunk } from '@chunklog/chunk-core';
import { ChunklogClient, type TabView, type TabViewSnapshot } from '@chunklog/client';
import { type FlakyProxy, readLog, startFlakyProxy, waitFor } from '@chunklog/client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

async function storedLog(client: ChunklogClient, tabId: string): Promise<Map<number, Chunk>> {
  return new Map((await readLog(client, tabId)).map((chunk) => [chunk.seq, chunk]));
}

async function runToIdle(client: ChunklogClient, tabId: string, text: string) {
  const before = (await client.getTab(tabId)).lastSeq;
  await client.sendMessage(tabId, { text });
  await waitFor('the turn to end', async () => {
    const tab = await client.getTab(tabId);
    return tab.status === 'idle' && tab.lastSeq > before + 1;
  });
}

/** Every snapshot a view publishes, in order. */
function snapshots(view: TabView): TabViewSnapshot[] {
  const seen: TabViewSnapshot[] = [];
  view.subscribe(() => {
    const snapshot = view.getSnapshot();
    if (seen.at(-1) !== snapshot) seen.push(snapshot);
  });
  return seen;
}

/** The window's invariants: one contiguous seq range, no chunk twice, equal to the stored log. */
function expectSound(snapshot: TabViewSnapshot, log: Map<number, Chunk>) {
  const seqs = snapshot.chunks.map((chunk) => chunk.seq);
  const first = seqs[0] ?? 0;
  expect(seqs).toEqual(seqs.map((_, index) => first + index));
  expect(new Set(snapshot.chunks.map((chunk) => chunk.id)).size).toBe(seqs.length);
  for (const chunk of snapshot.chunks) expect(chunk).toEqual(log.get(chunk.seq));
  const sealedById = new Map([...log.values()].map((chunk) => [chunk.id, chunk]));
  for (const open of snapshot.openBlocks) {
    const sealed = sealedById.get(open.id);
    if (sealed?.type === 'text') expect(sealed.data.text.startsWith(open.text)).toBe(true);
  }
}

describe('TabView against a real gateway', () => {
  let gateway: RealGateway;
  let direct: ChunklogClient;
  let proxy: FlakyProxy;

  beforeAll(async () => {
    gateway = await startRealGateway();
    direct = new ChunklogClient({ baseUrl: gateway.url });
    proxy = await startFlakyProxy({ target: gateway.url });
  });
  afterAll(async () => {
    await proxy.close();
    await gateway.close();
  });

  it('joins pages and live events without a duplicate or a hole, across a dropped connection', async () => {
    const tab = await direct.createTab({ title: 'pages and live' });
    for (const n of [1, 2, 3]) await runToIdle(direct, tab.id, `[[sim: words 20]] history ${n}`);
    await direct.sendMessage(tab.id, { text: '[[sim: words 500]] [[sim: rate 400]] long answer' });
    await waitFor('the answer to stream', async () => (await direct.getTab(tab.id)).lastSeq >= 7);

    const view = new ChunklogClient({ baseUrl: proxy.url }).view(tab.id, {
      limit: 4,
      pageSize: 2,
      stream: { backoff: { initialMs: 10, maxMs: 100 } },
    });
    const seen = snapshots(view);
    await waitFor('live', () => view.getSnapshot().connection === 'live');
    await waitFor('text streaming', () => view.getSnapshot().openBlocks.some((b) => b.text));
    proxy.dropAll();
    // Scroll to the top while the answer streams: pages and seals meet in one window.
    while (await view.loadOlder().catch(() => true)) {}
    const top = view.getSnapshot();
    expect(top.hasOlder).toBe(false);
    expect(top.chunks[0]?.seq).toBe(1);

    await waitFor('the turn to end', async () => (await direct.getTab(tab.id)).status === 'idle');
    const log = await storedLog(direct, tab.id);
    await waitFor('the last seal', () => view.getSnapshot().chunks.at(-1)?.seq === log.size);
    expect(view.getSnapshot().connection).toBe('live');
    expect(seen.some((snapshot) => snapshot.connection === 'reconnecting')).toBe(true);
    for (const snapshot of seen) expectSound(snapshot, log);
    expect(view.getSnapshot().openBlocks).toEqual([]);
    // The turn's end let the window evict down to its limit again, at chunk grain.
    await waitFor('the turn to end in the view', () => view.getSnapshot().liveTurnId === null);
    const tail = [...log.keys()].slice(-4);
    expect(view.getSnapshot().chunks.map((chunk) => chunk.seq)).toEqual(tail);
    expect(view.getSnapshot().hasOlder).toBe(true);
    view.close();
  });

  it('evicts at chunk grain beyond its limit but never the live turn or an open block', async () => {
    const tab = await direct.createTab({ title: 'long turn' });
    await runToIdle(direct, tab.id, '[[sim: words 10]] before');
    const view = direct.view(tab.id, { limit: 3, pageSize: 3 });
    const seen = snapshots(view);
    await waitFor('live', () => view.getSnapshot().connection === 'live');
    await runToIdle(
      direct,
      tab.id,
      '[[sim: tool calculator {"expression":"6*7"}]] [[sim: steps 6]] [[sim: words 40]] [[sim: rate 400]] agentic',
    );
    const log = await storedLog(direct, tab.id);
    await waitFor('the last seal', () => view.getSnapshot().chunks.at(-1)?.seq === log.size);
    const liveTurn = log.get(log.size)?.turnId;
    const turnSeqs = [...log.values()].filter((c) => c.turnId === liveTurn).map((c) => c.seq);
    expect(turnSeqs.length).toBeGreaterThan(6);
    for (const snapshot of seen) {
      expectSound(snapshot, log);
      if (snapshot.liveTurnId !== liveTurn) continue;
      // While the turn runs, every chunk of it sealed so far is held.
      const newest = snapshot.chunks.at(-1)?.seq ?? 0;
      const held = new Set(snapshot.chunks.map((chunk) => chunk.seq));
      for (const seq of turnSeqs) if (seq <= newest) expect(held.has(seq), `seq ${seq}`).toBe(true);
    }
    // The earlier turn went once the window was over its limit; the live one never did.
    expect(
      seen.some((snapshot) => snapshot.chunks.length > 3 && snapshot.liveTurnId === liveTurn),
    ).toBe(true);
    expect(view.getSnapshot().chunks[0]?.seq).toBeGreaterThan(1);
    expect(view.getSnapshot().liveTurnId).toBeNull();
    view.trim();
    expect(view.getSnapshot().chunks.length).toBe(3);
    view.close();
  });

  it('with evictNewer, scrolls a deep tab to seq 1 and back holding at most a limit and a page', async () => {
    const tab = await direct.createTab({ title: 'deep' });
    await runToIdle(
      direct,
      tab.id,
      '[[sim: tool calculator {"expression":"1+1"}]] [[sim: steps 20]] [[sim: words 5]] deep',
    );
    const depth = (await direct.getTab(tab.id)).lastSeq;
    expect(depth).toBeGreaterThan(40);
    const view = direct.view(tab.id, { limit: 10, pageSize: 5, evictNewer: true });
    const seen = snapshots(view);
    await waitFor('live', () => view.getSnapshot().connection === 'live');
    while (await view.loadOlder()) {}
    expect(view.getSnapshot()).toMatchObject({ hasOlder: false, following: false, hasNewer: true });
    expect(view.getSnapshot().chunks.map((chunk) => chunk.seq)).toEqual(
      Array.from({ length: 10 }, (_, index) => index + 1),
    );

    // A turn runs while the view is far from the live end: it is told, its chunks wait.
    await direct.sendMessage(tab.id, { text: '[[sim: words 200]] [[sim: rate 400]] meanwhile' });
    await waitFor('the running turn', () => view.getSnapshot().liveTurnId !== null);
    expect(view.getSnapshot().chunks.at(-1)?.seq).toBe(10);
    while (await view.loadNewer()) {}
    expect(view.getSnapshot().following).toBe(true);
    await waitFor('the turn to end', async () => (await direct.getTab(tab.id)).status === 'idle');
    const log = await storedLog(direct, tab.id);
    await waitFor('the last seal', () => view.getSnapshot().chunks.at(-1)?.seq === log.size);
    await waitFor('the turn to end in the view', () => view.getSnapshot().liveTurnId === null);
    for (const snapshot of seen) {
      expectSound(snapshot, log);
      expect(snapshot.chunks.length).toBeLessThanOrEqual(15);
    }
    expect(view.getSnapshot().chunks.map((chunk) => chunk.seq)).toEqual([...log.keys()].slice(-10));
    view.close();
  });

  it('retries its first page while the gateway cannot be reached, showing the error meanwhile', async () => {
    const tab = await direct.createTab({ title: 'late gateway' });
    await runToIdle(direct, tab.id, '[[sim: words 5]] hello');
    const unreachable = await startFlakyProxy({ target: 'http://127.0.0.1:9' });
    try {
      const view = new ChunklogClient({ baseUrl: unreachable.url }).view(tab.id, {
        stream: { backoff: { initialMs: 20, maxMs: 100 } },
      });
      const seen = snapshots(view);
      await waitFor('the error', () => view.getSnapshot().error?.code === 'network');
      expect(view.getSnapshot().loading).toBe(true);
      unreachable.target = gateway.url;
      await waitFor('live', () => view.getSnapshot().connection === 'live');
      expect(view.getSnapshot()).toMatchObject({ error: null, loading: false });
      expect(view.getSnapshot().chunks).toHaveLength(2);
      expect(seen.filter((snapshot) => snapshot.error !== null).length).toBeGreaterThan(0);
      view.close();
    } finally {
      await unreachable.close();
    }
  });

  it('keeps one snapshot object until something changes (useSyncExternalStore, Svelte stores)', async () => {
    const tab = await direct.createTab({ title: 'snapshots' });
    const view = direct.view(tab.id);
    const values: TabViewSnapshot[] = [];
    const unsubscribe = view.toStore().subscribe((snapshot) => values.push(snapshot));
    expect(values).toHaveLength(1);
    await waitFor('live', () => view.getSnapshot().connection === 'live');
    const live = view.getSnapshot();
    expect(view.getSnapshot()).toBe(live);
    expect(Object.isFrozen(live)).toBe(true);
    await runToIdle(direct, tab.id, '[[sim: words 5]] hi');
    await waitFor('two chunks', () => view.getSnapshot().chunks.length === 2);
    expect(view.getSnapshot()).not.toBe(live);
    // turn-done follows the last seal on the stream.
    await waitFor('the turn to end', () => view.getSnapshot().status === 'idle');
    expect(values.map((snapshot) => snapshot.status)).toContain('running');
    unsubscribe();
    view.close();
  });
});

describe('TabView while a model call is retried', () => {
  let gateway: RealGateway;
  let client: ChunklogClient;

  beforeAll(async () => {
    // Three retries, each waiting a few tens of milliseconds.
    gateway = await startRealGateway({
      retry: { maxAttempts: 4, baseDelayMs: 40, maxDelayMs: 200, maxRetryAfterMs: 5_000 },
    });
    client = new ChunklogClient({ baseUrl: gateway.url });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('shows each retry of the running turn, then none once the answer streams and after the turn', async () => {
    const tab = await client.createTab({ title: 'retries' });
    const view = client.view(tab.id);
    const seen = snapshots(view);
    await waitFor('live', () => view.getSnapshot().connection === 'live');
    expect(view.getSnapshot().retry).toBeNull();
    await client.sendMessage(tab.id, {
      text: 'shaky [[sim: error 529 times=2]] [[sim: text "steady now"]]',
    });
    await waitFor(
      'the turn to end',
      () => view.getSnapshot().status === 'idle' && seen.some((s) => s.retry),
    );
    await waitFor('the answer', () =>
      view.getSnapshot().chunks.some((c) => c.type === 'text' && c.data.text === 'steady now'),
    );

    // The retries as the view showed them, in order, each once, each of the running turn.
    const shown = seen.map((snapshot) => snapshot.retry).filter((retry) => retry !== null);
    const distinct = shown.filter((retry, index) => shown.indexOf(retry) === index);
    expect(
      distinct.map(({ retry, maxRetries, reason }) => ({ retry, maxRetries, reason })),
    ).toEqual([
      { retry: 1, maxRetries: 3, reason: '529 overloaded_error' },
      { retry: 2, maxRetries: 3, reason: '529 overloaded_error' },
    ]);
    const retrying = seen.filter((snapshot) => snapshot.retry !== null);
    for (const snapshot of retrying) {
      expect(snapshot.liveTurnId).toBe(snapshot.retry?.turnId);
      // Nothing of the answer yet while a retry is shown.
      expect(snapshot.openBlocks).toEqual([]);
    }
    // Cleared when the answer's block opened, before the turn ended.
    const firstAnswer = seen.findIndex((snapshot) => snapshot.openBlocks.length > 0);
    const lastRetrying = seen.lastIndexOf(retrying.at(-1)!);
    expect(firstAnswer).toBeGreaterThan(lastRetrying);
    expect(seen[firstAnswer]?.retry).toBeNull();
    expect(view.getSnapshot().retry).toBeNull();
    view.close();
  });
});
