import type { Chunk } from '@chunklog/chunk-core';
import {
  ChunklogClient,
  ChunklogError,
  type StreamEvent,
  type TabStream,
  type WebSocketConstructor,
} from '@chunklog/client';
import { type FlakyProxy, readLog, startFlakyProxy, waitFor } from '@chunklog/client/testing';
import { sleep } from '@chunklog/test-infra';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

/** Where each connection is cut: bytes from the server, drawn from a seed a failing run names. */
function dropPoints(seed: number): () => number {
  const points = fc.sample(fc.integer({ min: 300, max: 6_300 }), { seed, numRuns: 1_000 });
  let next = 0;
  return () => points[next++ % points.length] ?? 1_000;
}

/** Waits until the tab ran every message sent to it and is idle. */
async function waitIdle(client: ChunklogClient, tabId: string, minimumSeq: number) {
  await waitFor('the tab to finish its turns', async () => {
    const tab = await client.getTab(tabId);
    return tab.status === 'idle' && tab.lastSeq >= minimumSeq;
  });
}

/** Records what a stream delivers, and checks as it goes that no text is doubled or lost. */
function record(stream: TabStream) {
  const events: StreamEvent[] = [];
  const seals: Chunk[] = [];
  const text = new Map<string, string>();
  /** Per block, the connections its text came over: two or more is a resume mid-block. */
  const connections = new Map<string, Set<number>>();
  const problems: string[] = [];
  stream.on('event', (event) => {
    events.push(event);
    if (event.event === 'chunk-seal') seals.push(event.data.chunk);
    if (event.event === 'chunk-open') {
      if (text.has(event.data.id)) problems.push(`block ${event.data.id} opened twice`);
      text.set(event.data.id, '');
    }
    if (event.event === 'chunk-delta') {
      const held = text.get(event.data.id);
      if (held === undefined) problems.push(`delta of a block never opened`);
      else if (event.data.offset !== held.length) {
        problems.push(`delta at ${event.data.offset} after ${held.length} characters`);
      } else text.set(event.data.id, held + event.data.text);
      const over = connections.get(event.data.id) ?? new Set();
      connections.set(event.data.id, over.add(stream.connections));
    }
  });
  const resumedMidBlock = () => [...connections.values()].filter((over) => over.size > 1).length;
  return { events, seals, text, problems, resumedMidBlock };
}

/** Seals delivered exactly once each, in seq order, equal to the stored log. */
function expectExactlyOnce(recorded: ReturnType<typeof record>, log: Chunk[]) {
  expect(recorded.problems).toEqual([]);
  expect(recorded.seals.map((chunk) => chunk.seq)).toEqual(log.map((chunk) => chunk.seq));
  expect(recorded.seals).toEqual(log);
  // Text streamed of a block is a prefix of what was sealed (the rest came with the seal).
  for (const chunk of log) {
    const streamed = recorded.text.get(chunk.id);
    if (streamed === undefined || chunk.type !== 'text') continue;
    expect(chunk.data.text.startsWith(streamed), `block ${chunk.seq}`).toBe(true);
  }
}

const fastBackoff = { initialMs: 10, maxMs: 200 };

describe('TabStream against a real gateway', () => {
  let gateway: RealGateway;
  let direct: ChunklogClient;
  let proxy: FlakyProxy | null = null;
  const streams: TabStream[] = [];

  beforeAll(async () => {
    gateway = await startRealGateway({ limits: { reconcileMs: 200 } });
    direct = new ChunklogClient({ baseUrl: gateway.url });
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await proxy?.close();
    proxy = null;
  });
  afterAll(() => gateway.close());

  for (const transport of ['sse', 'websocket'] as const) {
    it(`delivers every seal and character exactly once across random disconnects (${transport})`, async () => {
      const seed = Number(process.env.CLIENT_DROP_SEED ?? Date.now() % 100_000);
      // Each connection is cut after 300 B to 6 KB from the server: inside headers, events, JSON.
      proxy = await startFlakyProxy({ target: gateway.url, dropAfterBytes: dropPoints(seed) });
      const client = new ChunklogClient({
        baseUrl: proxy.url,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
      });
      const tab = await direct.createTab({ title: `drops ${transport}` });
      const stream = client.stream(tab.id, { transport, backoff: fastBackoff });
      streams.push(stream);
      const recorded = record(stream);
      for (const text of [
        '[[sim: words 250]] [[sim: rate 600]] first',
        '[[sim: tool calculator {"expression":"6*7"}]] second',
        '[[sim: words 250]] [[sim: rate 600]] third',
      ]) {
        await direct.sendMessage(tab.id, { text, mode: 'enqueue' });
      }
      await waitIdle(direct, tab.id, 8);
      const log = await readLog(direct, tab.id);
      await waitFor(
        `seq ${log.at(-1)?.seq} (seed ${seed})`,
        () => stream.lastSeq === log.at(-1)?.seq,
      );
      expectExactlyOnce(recorded, log);
      expect(proxy.drops, `seed ${seed}`).toBeGreaterThanOrEqual(3);
      expect(recorded.resumedMidBlock(), `seed ${seed}`).toBeGreaterThanOrEqual(1);
      expect(stream.connections).toBeGreaterThan(proxy.drops / 2);
    });
  }

  it('follows stream-end: a gateway shutting down hands the stream to another, resumed in place', async () => {
    const second = await gateway.startGateway();
    const first = await gateway.startGateway();
    proxy = await startFlakyProxy({ target: first.url });
    const client = new ChunklogClient({ baseUrl: proxy.url });
    const tab = await direct.createTab({ title: 'shutdown' });
    const stream = client.stream(tab.id, { backoff: fastBackoff });
    streams.push(stream);
    const recorded = record(stream);
    await direct.sendMessage(tab.id, { text: '[[sim: words 400]] [[sim: rate 200]] long' });
    await waitFor('text streaming', () => recorded.events.some((e) => e.event === 'chunk-delta'));
    proxy.target = second.url;
    await first.close();
    await waitIdle(direct, tab.id, 2);
    await direct.sendMessage(tab.id, { text: 'and again' });
    await waitIdle(direct, tab.id, 4);
    const log = await readLog(direct, tab.id);
    await waitFor('the last seal', () => stream.lastSeq === log.at(-1)?.seq);
    const ends = recorded.events.filter((event) => event.event === 'stream-end');
    expect(ends.map((event) => event.data.reason)).toEqual(['shutdown']);
    expect(recorded.events.filter((event) => event.event === 'stream-live')).toHaveLength(2);
    expectExactlyOnce(recorded, log);
  });

  it('ends after stream-end for a deleted tab, and iteration finishes', async () => {
    const tab = await direct.createTab({ title: 'deleted' });
    const stream = direct.stream(tab.id, { backoff: fastBackoff });
    streams.push(stream);
    const seen: string[] = [];
    const done = (async () => {
      for await (const event of stream) {
        seen.push(event.event);
        if (event.event === 'stream-live') await direct.deleteTab(tab.id);
      }
    })();
    await done;
    expect(seen).toEqual(['stream-live', 'stream-end']);
    expect(stream.state).toBe('closed');
  });

  it.each(['sse', 'websocket'] as const)(
    'fails with the API error when the tab does not exist, without retrying (%s)',
    async (transport) => {
      const client = new ChunklogClient({
        baseUrl: gateway.url,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
      });
      const stream = client.stream(crypto.randomUUID(), { transport, backoff: fastBackoff });
      const iteration = (async () => {
        for await (const _event of stream) {
          // nothing arrives
        }
      })();
      const error = await iteration.then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(ChunklogError);
      expect(error).toMatchObject({ code: 'not_found', status: 404 });
      expect(stream.connections).toBe(1);
    },
  );
});

describe('TabStream tickets against a real gateway with API keys', () => {
  const apiKey = `ck_${crypto.randomUUID()}`;
  let gateway: RealGateway;
  let proxy: FlakyProxy;

  beforeAll(async () => {
    gateway = await startRealGateway({ apiKey, limits: { ticketTtlMs: 1_000 } });
    proxy = await startFlakyProxy({ target: gateway.url });
  });
  afterAll(async () => {
    await proxy.close();
    await gateway.close();
  });

  /** A client through the proxy that records the statuses of its ticket and stream requests. */
  function countingClient(clock?: () => number) {
    const tickets: number[] = [];
    const opens: number[] = [];
    const client = new ChunklogClient({
      baseUrl: proxy.url,
      apiKey,
      ...(clock ? { clock } : {}),
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        const path = new URL(String(input)).pathname;
        if (path.endsWith('/stream-tickets')) tickets.push(response.status);
        if (path.endsWith('/events')) opens.push(response.status);
        return response;
      },
    });
    return { client, tickets, opens };
  }

  for (const [name, clock, expectedOpens] of [
    ['renews an expired ticket before it reconnects', undefined, [200, 200]],
    // The client's clock is behind: it takes the ticket for valid, the gateway refuses it.
    [
      'renews a ticket the gateway refuses (401) and resumes',
      () => Date.now() - 3_600_000,
      [200, 401, 200],
    ],
  ] as const) {
    it(name, async () => {
      const { client, tickets, opens } = countingClient(clock);
      const tab = await client.createTab({ title: 'tickets' });
      const stream = client.stream(tab.id, { ticket: true, backoff: fastBackoff });
      const recorded = record(stream);
      const states: string[] = [];
      stream.on('state', (state) => states.push(state));
      await waitFor('live', () => stream.state === 'live');
      expect(tickets).toEqual([201]);
      await client.sendMessage(tab.id, { text: 'before the drop' });
      await waitIdle(client, tab.id, 2);
      await sleep(1_200); // the ticket has expired by now
      proxy.dropAll();
      // States as they happened: a poll could miss a reconnect that takes a few milliseconds.
      await waitFor('live again', () => states.filter((state) => state === 'live').length === 2);
      expect(states.filter((state) => state === 'reconnecting')).toHaveLength(1);
      expect(tickets).toEqual([201, 201]);
      await client.sendMessage(tab.id, { text: 'after the drop' });
      await waitIdle(client, tab.id, 4);
      const log = await readLog(client, tab.id);
      await waitFor('the last seal', () => stream.lastSeq === log.at(-1)?.seq);
      expectExactlyOnce(recorded, log);
      expect(opens).toEqual(expectedOpens);
      expect(states).not.toContain('closed');
      stream.close();
    });
  }

  it('opens WebSocket streams with a ticket by default, as browsers must', async () => {
    const { client, tickets } = countingClient();
    const socketClient = new ChunklogClient({
      baseUrl: client.baseUrl,
      apiKey,
      fetch: (input, init) => client.fetch(String(input), init ?? {}),
      WebSocket: WebSocket as unknown as WebSocketConstructor,
    });
    const tab = await client.createTab();
    const stream = socketClient.stream(tab.id, { transport: 'websocket' });
    stream.start();
    await waitFor('live', () => stream.state === 'live');
    expect(tickets).toEqual([201]);
    stream.close();
  });

  it('sends the API key as a header when not asked for a ticket', async () => {
    const { client, tickets } = countingClient();
    const tab = await client.createTab();
    const stream = client.stream(tab.id);
    stream.start();
    await waitFor('live', () => stream.state === 'live');
    expect(tickets).toEqual([]);
    stream.close();
  });
});
