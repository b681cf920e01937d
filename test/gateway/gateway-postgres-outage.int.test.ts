/**
 * The gateway on a Postgres cluster of this file's own, stopped (immediate: a crash) while the
 * gateway runs: every route answers 503 `unavailable` with Retry-After, nothing is stored or
 * queued by a refused request, and everything is served again once the cluster is back. With a
 * real worker: a cancel refused during the outage leaves the turn running and a cancel after it
 * stops the turn; an SSE client watching through an outage mid-turn sees every seq once.
 */
import { builtinTools } from '@chunklog/agent-worker';
import { holdTool } from '@chunklog/agent-worker/testing';
import { type Chunk, INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import {
  apiRouteCalls,
  expectedError,
  type GatewayHarness,
  openEventSource,
  openWebSocket,
  postgresBackend,
  type ReceivedEvent,
  startGateway,
} from '@chunklog/gateway/testing';
import {
  type PrivatePostgres,
  privatePostgresAvailable,
  sleep,
  startPrivatePostgres,
} from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedWorker } from '../support/simulated-worker';

const available = privatePostgresAvailable();
if (!available) console.warn('!!! SKIPPED: the gateway Postgres outage suite (no initdb/pg_ctl)');

describe.skipIf(!available)('the gateway while Postgres is unreachable', () => {
  let postgres: PrivatePostgres;
  let gateway: GatewayHarness;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    gateway = await startGateway(postgresBackend('private postgres', postgres.url));
  });

  afterAll(async () => {
    await gateway?.close();
    await postgres?.dispose();
  });

  /** The queued messages' texts, up to and including `last` (the queue is first in, first out). */
  async function queuedTextsUntil(last: string): Promise<string[]> {
    const texts: string[] = [];
    const consumer = await gateway.backend.bus.consume(INTAKE_QUEUE, async (item) => {
      texts.push((item.data as MessageCommand).text);
      await item.ack();
    });
    const deadline = Date.now() + 10_000;
    while (!texts.includes(last) && Date.now() < deadline) await sleep(10);
    await consumer.stop();
    return texts;
  }

  it('answers every route 503 with Retry-After, stores nothing, and serves again once it is back', async () => {
    const tabId = await gateway.createTab();
    const post = (text: string) =>
      gateway.request('POST', `/v1/tabs/${tabId}/messages`, { body: { text } });
    expect((await post('before')).status).toBe(202);
    const generationBefore = await gateway.backend.store.cancelGeneration(tabId);

    await postgres.stop();

    // Tenant A's key was verified a moment ago (cached): these reach the routes. Tenant B's was
    // never used and a wrong one is unknown: the store cannot say, so those are 503s too, and
    // never a 401 for a key that may be valid.
    for (const key of [gateway.tenantA.key, gateway.tenantB.key, 'ck_wrong_key']) {
      for (const route of apiRouteCalls(tabId)) {
        const response = await gateway.request(route.method, route.path, {
          key,
          body: route.body,
        });
        const name = `${route.method} ${route.path} (${key.slice(0, 10)})`;
        expect(response.status, name).toBe(503);
        expect(response.body, name).toEqual(expectedError('unavailable'));
        expect(Number(response.headers.get('retry-after')), name).toBeGreaterThan(0);
      }
    }
    await expect(
      openWebSocket(`${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`, {
        authorization: `Bearer ${gateway.tenantA.key}`,
      }),
    ).rejects.toThrow(/503/);
    const ready = await gateway.request('GET', '/readyz', { key: null });
    expect(ready).toMatchObject({ status: 503, body: { status: 'unavailable' } });
    expect(ready.headers.get('retry-after')).toBe('2');
    expect((await gateway.request('GET', '/healthz', { key: null })).status).toBe(200);

    await postgres.start();
    let list = await gateway.request('GET', '/v1/tabs');
    const deadline = Date.now() + 20_000;
    while (list.status === 503 && Date.now() < deadline) {
      await sleep(100);
      list = await gateway.request('GET', '/v1/tabs');
    }
    expect(list.status).toBe(200);

    // Nothing a refused request asked for happened: no tab created or deleted, no cancel
    // recorded, no message queued.
    const tabs = (list.body as { tabs: { id: string }[] }).tabs.map((tab) => tab.id);
    expect(tabs).toEqual([tabId]);
    expect(await gateway.backend.store.cancelGeneration(tabId)).toBe(generationBefore);
    expect((await post('after')).status).toBe(202);
    expect(await queuedTextsUntil('after')).toEqual(['before', 'after']);
    for (const key of [gateway.tenantA.key, gateway.tenantB.key]) {
      expect((await gateway.request('GET', '/v1/tabs', { key })).status).toBe(200);
    }
    const chunks = await gateway.request('GET', `/v1/tabs/${tabId}/chunks`);
    expect(chunks).toMatchObject({ status: 200, body: { total: 0 } });
    expect((await gateway.request('GET', '/readyz', { key: null })).status).toBe(200);
  });

  const seqsSealed = (events: ReceivedEvent[]) =>
    events
      .filter((event) => event.event === 'chunk-seal')
      .map((event) => (event.data as { chunk: Chunk }).chunk.seq);

  async function storedChunks(tabId: string): Promise<Chunk[]> {
    const page = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=500`);
    return (page.body as { chunks: Chunk[] }).chunks;
  }

  /** A new tab with an EventSource client watching it and `text` sent to it (accepted). */
  async function watchedTurn(text: string) {
    const tabId = await gateway.createTab();
    const sse = openEventSource(`${gateway.baseUrl}/v1/tabs/${tabId}/events`, {
      authorization: `Bearer ${gateway.tenantA.key}`,
    });
    await sse.opened;
    const posted = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, { body: { text } });
    expect(posted.status).toBe(202);
    return { tabId, sse };
  }

  /** Retries `call` while the gateway still answers 503 after the cluster came back. */
  async function onceServing(call: () => ReturnType<GatewayHarness['request']>) {
    const deadline = Date.now() + 20_000;
    let response = await call();
    while (response.status === 503 && Date.now() < deadline) {
      await sleep(100);
      response = await call();
    }
    return response;
  }

  it('refuses a cancel with 503 during an outage and records nothing; a cancel after it stops the turn', async () => {
    const hold = holdTool();
    const running = await startSimulatedWorker(gateway, {
      tools: [...builtinTools(), hold.tool],
      leaseMs: 2_000,
    });
    try {
      const { tabId, sse } = await watchedTurn('wait [[sim: tool hold {}]]');
      await hold.running;
      const generation = await gateway.backend.store.cancelGeneration(tabId);

      await postgres.stop();
      const refused = await gateway.request('POST', `/v1/tabs/${tabId}/cancel`);
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual(expectedError('unavailable'));
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      await sleep(3_000);
      await postgres.start();

      // Nothing of the refused cancel happened: no generation recorded, the turn still runs.
      const tab = await onceServing(() => gateway.request('GET', `/v1/tabs/${tabId}`));
      expect(tab.body).toMatchObject({ tab: { status: 'running' } });
      expect(await gateway.backend.store.cancelGeneration(tabId)).toBe(generation);
      expect(sse.events.some((event) => event.event === 'turn-done')).toBe(false);

      const cancelled = await onceServing(() =>
        gateway.request('POST', `/v1/tabs/${tabId}/cancel`),
      );
      expect(cancelled.status).toBe(202);
      hold.release();
      const done = await sse.waitFor((event) => event.event === 'turn-done', 20_000);
      expect(done.data).toMatchObject({ reason: 'cancelled' });
      await sleep(300);
      expect(sse.events.filter((event) => event.event === 'turn-done')).toHaveLength(1);
      const stored = await storedChunks(tabId);
      expect(seqsSealed(sse.events)).toEqual(stored.map((chunk) => chunk.seq));
      sse.close();
    } finally {
      hold.release();
      await running.close();
    }
  });

  it('an SSE client watching through an outage mid-turn sees every seq once and the turn end', async () => {
    const running = await startSimulatedWorker(gateway, { leaseMs: 2_000 });
    try {
      const { tabId, sse } = await watchedTurn('tell me [[sim: words 150]] [[sim: rate 60]]');
      await sse.waitFor(
        () => sse.events.filter((event) => event.event === 'chunk-delta').length > 5,
        10_000,
      );
      await postgres.stop();
      await sleep(4_000);
      await postgres.start();

      const done = await sse.waitFor((event) => event.event === 'turn-done', 60_000);
      expect(['completed', 'error']).toContain((done.data as { reason: string }).reason);
      await sleep(300);
      expect(sse.events.filter((event) => event.event === 'turn-done')).toHaveLength(1);
      const stored = await storedChunks(tabId);
      expect(stored.map((chunk) => chunk.seq)).toEqual(stored.map((_, index) => index + 1));
      // Every seq exactly once, in order, and each as stored.
      expect(seqsSealed(sse.events)).toEqual(stored.map((chunk) => chunk.seq));
      const sealed = sse.events
        .filter((event) => event.event === 'chunk-seal')
        .map((event) => (event.data as { chunk: Chunk }).chunk);
      expect(sealed).toEqual(stored);
      sse.close();
    } finally {
      await running.close();
    }
  });
});
