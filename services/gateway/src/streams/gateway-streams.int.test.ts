import http from 'node:http';
import type { Chunk } from '@chunklog/chunk-core';
import { sleep } from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import {
  openEventSource,
  openWebSocket,
  type ReceivedEvent,
  type RecordingClient,
  sealsOf,
} from '../testing/stream-clients';
import { everyBackend } from '../testing/test-backends';
import { TurnDriver } from '../testing/turn-driver';

const backends = await everyBackend();

/** Checks a stream the way a client renders it: deltas contiguous, streamed text equal to the seal. */
function checkStream(events: ReceivedEvent[]): { streamedBlocks: number } {
  const open = new Map<string, string>();
  let streamedBlocks = 0;
  for (const event of events) {
    const data = event.data as { id: string; offset: number; text: string; chunk: Chunk };
    if (event.event === 'chunk-open') {
      expect(open.has(data.id)).toBe(false);
      open.set(data.id, '');
    } else if (event.event === 'chunk-delta') {
      expect(open.get(data.id)?.length, 'delta offset').toBe(data.offset);
      open.set(data.id, open.get(data.id) + data.text);
    } else if (event.event === 'chunk-seal') {
      expect(event.id).toBe(String(data.chunk.seq));
      const streamed = open.get(data.chunk.id);
      if (streamed !== undefined) {
        expect(streamed).toBe((data.chunk.data as { text: string }).text);
        open.delete(data.chunk.id);
        streamedBlocks++;
      }
    }
  }
  return { streamedBlocks };
}

describe.each(backends)('gateway streams on $name', (backend) => {
  let gateway: GatewayHarness;
  const auth = () => ({ authorization: `Bearer ${gateway.tenantA.key}` });
  const eventsUrl = (tabId: string, query = '') =>
    `${gateway.baseUrl}/v1/tabs/${tabId}/events${query}`;
  const wsUrl = (tabId: string, query = '') =>
    `${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws${query}`;

  beforeAll(async () => {
    gateway = await startGateway(backend, { limits: { heartbeatMs: 100, reconcileMs: 100 } });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function runTurn(driver: TurnDriver, words: string[]): Promise<void> {
    await driver.startTurn();
    await driver.sealUserText('question');
    await driver.openBlock();
    for (const word of words) {
      await driver.delta(word);
      await sleep(1);
    }
    await driver.sealOpen();
    await driver.endTurn();
  }

  it('delivers over SSE and WebSocket exactly what the REST pages return', async () => {
    const tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    const sse = openEventSource(eventsUrl(tabId), auth());
    await sse.opened;
    const ws = await openWebSocket(wsUrl(tabId), auth());
    // The WebSocket joins the subscription the SSE stream already holds; let its relay start.
    await sleep(50);
    await runTurn(driver, ['Hello', ', ', 'world']);
    await runTurn(driver, ['second ', 'answer']);
    const doneTwice = (client: RecordingClient) =>
      client.waitFor(
        (event) =>
          event.event === 'turn-done' &&
          client.events.filter((e) => e.event === 'turn-done').length === 2,
      );
    await Promise.all([doneTwice(sse), doneTwice(ws)]);
    const page = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=500`);
    const stored = (page.body as { chunks: Chunk[] }).chunks;
    expect(stored.map((chunk) => chunk.seq)).toEqual([1, 2, 3, 4]);
    for (const client of [sse, ws]) {
      expect(sealsOf(client.events)).toEqual(stored);
      expect(checkStream(client.events).streamedBlocks).toBe(2);
      expect(client.events.map((event) => event.event).slice(0, 6)).toEqual([
        'stream-live',
        'turn-start',
        'chunk-seal',
        'chunk-open',
        'chunk-delta',
        'chunk-delta',
      ]);
    }
    sse.close();
    ws.close();
    await driver.close();
  });

  it('catches up from the store after ?after= and Last-Event-ID (the header wins)', async () => {
    const tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    await driver.startTurn();
    for (let index = 1; index <= 6; index++) await driver.sealUserText(`m${index}`);
    await driver.endTurn();
    const fromQuery = openEventSource(eventsUrl(tabId, '?after=2'), auth());
    const fromHeader = openEventSource(eventsUrl(tabId, '?after=2'), {
      ...auth(),
      'last-event-id': '4',
    });
    const fromWs = await openWebSocket(wsUrl(tabId, '?after=5'), auth());
    await Promise.all([
      fromQuery.waitFor((event) => event.id === '6'),
      fromHeader.waitFor((event) => event.id === '6'),
      fromWs.waitFor((event) => event.id === '6'),
    ]);
    expect(sealsOf(fromQuery.events).map((chunk) => chunk.seq)).toEqual([3, 4, 5, 6]);
    expect(sealsOf(fromHeader.events).map((chunk) => chunk.seq)).toEqual([5, 6]);
    expect(sealsOf(fromWs.events).map((chunk) => chunk.seq)).toEqual([6]);
    expect(sealsOf(fromQuery.events)).toEqual(driver.sealed.slice(2));
    for (const client of [fromQuery, fromHeader, fromWs]) client.close();
    await driver.close();
  });

  it('replays the open block as one delta from offset 0 to a client joining mid-block', async () => {
    const tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    await driver.startTurn();
    await driver.sealUserText('question');
    const blockId = await driver.openBlock();
    await driver.delta('Hello ');
    await driver.delta('wor');
    const sse = openEventSource(eventsUrl(tabId), auth());
    const ws = await openWebSocket(wsUrl(tabId), auth());
    for (const client of [sse, ws]) {
      const first = await client.waitFor((event) => event.event === 'chunk-delta');
      expect(first.data).toEqual({ tabId, id: blockId, offset: 0, text: 'Hello wor' });
    }
    await driver.delta('ld');
    await driver.sealOpen();
    await driver.endTurn();
    for (const client of [sse, ws]) {
      await client.waitFor((event) => event.event === 'turn-done');
      expect(checkStream(client.events).streamedBlocks).toBe(1);
      expect(sealsOf(client.events).map((chunk) => chunk.seq)).toEqual([1, 2]);
      client.close();
    }
    await driver.close();
  });

  it('tells each client, once caught up, whether a turn is running and which', async () => {
    const tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    const liveOf = (client: RecordingClient) =>
      client.waitFor((event) => event.event === 'stream-live');
    const early = await openWebSocket(wsUrl(tabId), auth());
    expect((await liveOf(early)).data).toEqual({
      tabId,
      after: 0,
      status: 'idle',
      activeTurnId: null,
    });

    const turnId = await driver.startTurn();
    await driver.sealUserText('question');
    await driver.openBlock();
    await driver.delta('Hel');
    const sse = openEventSource(eventsUrl(tabId), auth());
    const ws = await openWebSocket(wsUrl(tabId), auth());
    for (const client of [sse, ws]) {
      const live = await liveOf(client);
      expect(live.data).toEqual({ tabId, after: 1, status: 'running', activeTurnId: turnId });
      // It follows the catch-up: the seal and the open block's text so far come before it.
      const names = client.events.map((event) => event.event);
      expect(names.slice(0, names.indexOf('stream-live'))).toEqual([
        'chunk-seal',
        'chunk-open',
        'chunk-delta',
      ]);
    }
    await driver.sealOpen();
    await driver.endTurn();
    for (const client of [sse, ws, early]) {
      const done = await client.waitFor((event) => event.event === 'turn-done');
      expect((done.data as { turnId: string }).turnId).toBe(turnId);
      expect(client.events.filter((event) => event.event === 'stream-live')).toHaveLength(1);
      client.close();
    }

    // A client resuming after the turn ended learns it is over without waiting for anything.
    const late = await openWebSocket(wsUrl(tabId, '?after=1'), auth());
    expect((await liveOf(late)).data).toEqual({
      tabId,
      after: 2,
      status: 'idle',
      activeTurnId: null,
    });
    expect(sealsOf(late.events).map((chunk) => chunk.seq)).toEqual([2]);
    late.close();
    await driver.close();
  });

  it('fills a gap seen live from the store and drops seals it already sent', async () => {
    const tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    const sse = openEventSource(eventsUrl(tabId), auth());
    await sse.opened;
    await driver.startTurn();
    const first = await driver.sealUserText('one');
    await sse.waitFor((event) => event.id === '1');
    // Two seals whose events are lost on the bus, then one that arrives.
    await driver.sealNew({ role: 'user', type: 'text', data: { text: 'two' } }, { publish: false });
    await driver.sealNew(
      { role: 'user', type: 'text', data: { text: 'three' } },
      { publish: false },
    );
    await driver.sealUserText('four');
    await driver.publishSeal(first);
    await driver.endTurn();
    await sse.waitFor((event) => event.event === 'turn-done');
    expect(sealsOf(sse.events)).toEqual(driver.sealed);
    sse.close();
    await driver.close();
  });

  it('catches up seals lost on the bus even when no later seal reveals the gap', async () => {
    const tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    const ws = await openWebSocket(wsUrl(tabId), auth());
    await driver.startTurn();
    await driver.sealUserText('seen live');
    await ws.waitFor((event) => event.id === '1');
    // The bus "loses" the last two seals of the turn (as across a NATS restart).
    await driver.sealNew(
      { role: 'user', type: 'text', data: { text: 'lost 1' } },
      { publish: false },
    );
    await driver.sealNew(
      { role: 'user', type: 'text', data: { text: 'lost 2' } },
      { publish: false },
    );
    await driver.endTurn();
    await ws.waitFor((event) => event.id === '3', 3_000);
    expect(sealsOf(ws.events)).toEqual(driver.sealed);
    ws.close();
    await driver.close();
  });

  it('resumes across 100 random disconnects with every seq once, in order, and no text twice', async () => {
    const tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    let disconnects = 0;
    let finished = false;
    const producing = (async () => {
      let turn = 0;
      while (disconnects < 100) {
        turn++;
        await driver.startTurn();
        await driver.sealUserText(`turn ${turn}`);
        for (let block = 0; block < 2; block++) {
          await driver.openBlock();
          for (let delta = 0; delta < 8; delta++) {
            await driver.delta(`t${turn}b${block}d${delta} `);
            await sleep(Math.floor(Math.random() * 3));
          }
          await driver.sealOpen();
        }
        await driver.endTurn();
      }
      finished = true;
    })();

    let lastSeq = 0;
    let streamedBlocks = 0;
    let resumedMidBlock = 0;
    const seenBlocks = new Set<string>();
    while (true) {
      const done = finished;
      const headers: Record<string, string> = { ...auth() };
      if (lastSeq > 0) headers['last-event-id'] = String(lastSeq);
      const client = openEventSource(eventsUrl(tabId), headers);
      // Every third connection drops right inside a block (after a delta past offset 0); the
      // others after a random number of events.
      const midBlock = disconnects % 3 === 0;
      const isCut = (event: ReceivedEvent, index: number) =>
        midBlock
          ? event.event === 'chunk-delta' && (event.data as { offset: number }).offset > 0
          : index + 1 >= quota;
      const quota = done ? Number.POSITIVE_INFINITY : 1 + Math.floor(Math.random() * 12);
      if (done) {
        const finalSeq = driver.sealed.length;
        if (lastSeq < finalSeq) {
          await client.waitFor((event) => event.id === String(finalSeq), 10_000);
        }
      } else {
        await Promise.race([
          client.waitFor((event) => isCut(event, client.events.indexOf(event)), 3_000),
          sleep(300),
        ]).catch(() => undefined);
      }
      client.close();
      // Judge only what arrived up to the cut, as a client that stopped listening there would.
      const cut = done ? -1 : client.events.findIndex(isCut);
      const events = cut === -1 ? client.events.slice() : client.events.slice(0, cut + 1);
      for (const event of events) {
        if (event.event === 'chunk-seal') {
          expect(Number(event.id)).toBe(lastSeq + 1);
          lastSeq = Number(event.id);
        }
        if (event.event === 'chunk-delta') {
          const data = event.data as { id: string; offset: number; text: string };
          if (data.offset === 0 && data.text.length > 0 && seenBlocks.has(data.id))
            resumedMidBlock++;
          seenBlocks.add(data.id);
        }
      }
      streamedBlocks += checkStream(events).streamedBlocks;
      if (done) break;
      disconnects++;
    }
    await producing;
    expect(disconnects).toBeGreaterThanOrEqual(100);
    expect(lastSeq).toBe(driver.sealed.length);
    const page = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=500`);
    expect((page.body as { total: number }).total).toBe(lastSeq);
    // The run must actually have exercised mid-block reconnects and streamed blocks.
    expect(resumedMidBlock).toBeGreaterThan(0);
    expect(streamedBlocks).toBeGreaterThan(0);
    // Every closed client's stream was released (no relay, subscription or gauge left behind).
    for (let attempt = 0; attempt < 100 && gateway.app.openStreamCount() > 0; attempt++) {
      await sleep(20);
    }
    expect(gateway.app.openStreamCount()).toBe(0);
    await driver.close();
  });

  it('cuts off a client that stops reading, while another keeps its latency', async () => {
    const slowGateway = await startGateway(
      backend,
      { limits: { streamBufferBytes: 256 * 1024, streamQueueEvents: 10_000 } },
      gateway.backend,
    );
    try {
      const tabId = await slowGateway.createTab();
      const driver = new TurnDriver(slowGateway.backend.store, slowGateway.backend.bus, tabId);
      const headers = { authorization: `Bearer ${slowGateway.tenantA.key}` };
      const url = `${slowGateway.baseUrl}/v1/tabs/${tabId}/events`;
      // The slow client: reads the headers, then never reads again.
      const slowResponse = await new Promise<http.IncomingMessage>((resolve) =>
        http.get(url, { headers }, resolve),
      );
      slowResponse.pause();
      const fast = openEventSource(url, headers);
      await fast.opened;
      await driver.startTurn();
      await driver.openBlock();
      const cutOffCount = async () =>
        (await slowGateway.app.gatewayMetrics.streamsCutOff.get()).values.find(
          (value) => value.labels.reason === 'slow_client',
        )?.value ?? 0;
      // Small deltas at a steady pace, until the non-reading client's socket and the gateway's
      // bound are full (loopback buffers hold a few MB), plus some more after the cut.
      const chunk = 'x'.repeat(4 * 1024);
      const publishedAt: number[] = [];
      let afterCut = -1;
      while (afterCut < 100 && publishedAt.length < 5_000) {
        publishedAt.push(performance.now());
        await driver.delta(chunk);
        await sleep(1);
        if (afterCut >= 0) afterCut++;
        else if (publishedAt.length % 50 === 0 && (await cutOffCount()) > 0) afterCut = 0;
      }
      const deltas = publishedAt.length;
      await fast.waitFor(
        (event) =>
          event.event === 'chunk-delta' &&
          (event.data as { offset: number }).offset === (deltas - 1) * chunk.length,
        20_000,
      );
      const received = fast.events.filter((event) => event.event === 'chunk-delta');
      expect(received).toHaveLength(deltas);
      checkStream(fast.events);
      const latencies = received
        .map((event, index) => event.receivedAt - publishedAt[index]!)
        .sort((a, b) => a - b);
      const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
      // A relay that waited on the stuck client would stall the fast one for seconds (until the
      // cut-off) or for good; a bound of one second tells that apart from a loaded CI machine.
      expect(p99).toBeLessThan(1_000);
      const cutOff = await slowGateway.app.gatewayMetrics.streamsCutOff.get();
      expect(cutOff.values.find((value) => value.labels.reason === 'slow_client')?.value).toBe(1);
      expect(slowGateway.app.openStreamCount()).toBe(1);
      // Reading again, the slow client finds its stream over (ended, or reset after the grace).
      const ended = new Promise<void>((resolve) => {
        slowResponse.on('end', resolve);
        slowResponse.on('error', () => resolve());
        slowResponse.on('close', resolve);
      });
      slowResponse.resume();
      await ended;
      fast.close();
      await driver.close();
    } finally {
      await slowGateway.close();
    }
  });

  it('cuts off a WebSocket client that stops reading', async () => {
    const slowGateway = await startGateway(
      backend,
      { limits: { streamBufferBytes: 256 * 1024 } },
      gateway.backend,
    );
    try {
      const tabId = await slowGateway.createTab();
      const driver = new TurnDriver(slowGateway.backend.store, slowGateway.backend.bus, tabId);
      const slow = await openWebSocket(
        `${slowGateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`,
        { authorization: `Bearer ${slowGateway.tenantA.key}` },
      );
      slow.socket.pause();
      await sleep(50);
      await driver.startTurn();
      await driver.openBlock();
      const cutOff = async () =>
        (await slowGateway.app.gatewayMetrics.streamsCutOff.get()).values.find(
          (value) => value.labels.transport === 'ws' && value.labels.reason === 'slow_client',
        )?.value ?? 0;
      const chunk = 'y'.repeat(16 * 1024);
      for (let index = 0; index < 2_000 && (await cutOff()) === 0; index++) {
        await driver.delta(chunk);
        if (index % 4 === 0) await sleep(1);
      }
      expect(await cutOff()).toBe(1);
      expect(slowGateway.app.openStreamCount()).toBe(0);
      await driver.close();
    } finally {
      await slowGateway.close();
    }
  });

  it('sends heartbeats and ends streams with a final event on shutdown', async () => {
    const shutdownGateway = await startGateway(
      backend,
      { limits: { heartbeatMs: 30 } },
      gateway.backend,
    );
    const tabId = await shutdownGateway.createTab();
    const driver = new TurnDriver(
      shutdownGateway.backend.store,
      shutdownGateway.backend.bus,
      tabId,
    );
    await driver.startTurn();
    await driver.sealUserText('before shutdown');
    const url = `${shutdownGateway.baseUrl}/v1/tabs/${tabId}/events`;
    const raw = await new Promise<string>((resolve, reject) => {
      http
        .get(
          url,
          { headers: { authorization: `Bearer ${shutdownGateway.tenantA.key}` } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (part) => {
              text += part;
              if (text.includes(': heartbeat') && text.includes('id: 1'))
                void shutdownGateway.app.close();
            });
            response.on('end', () => resolve(text));
          },
        )
        .on('error', reject);
    });
    expect(raw).toContain(': heartbeat');
    expect(raw).toContain('event: chunk-seal\nid: 1\n');
    expect(raw).toMatch(/event: stream-end\ndata: \{"reason":"shutdown","after":1\}\n\n$/);
    await driver.close();
  });
});
