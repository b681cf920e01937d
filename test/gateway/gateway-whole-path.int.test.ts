import { validateRequest } from '@chunklog/anthropic-sim';
import type { Chunk } from '@chunklog/chunk-core';
import {
  everyBackend,
  type GatewayHarness,
  openEventSource,
  openWebSocket,
  sealsOf,
  startGateway,
} from '@chunklog/gateway/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedWorker } from '../support/simulated-worker';

const backends = await everyBackend();

describe.each(backends)('the whole path with the real worker and simulator on $name', (backend) => {
  let gateway: GatewayHarness;
  let running: Awaited<ReturnType<typeof startSimulatedWorker>> | undefined;

  beforeAll(async () => {
    gateway = await startGateway(backend);
    // Retries fast (four attempts in all: three retries), so a retried call costs milliseconds.
    running = await startSimulatedWorker(gateway, {
      retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 100, maxRetryAfterMs: 5_000 },
    });
  });
  afterAll(async () => {
    await running?.close();
    await gateway?.close();
  });

  it('streams a turn to EventSource and WebSocket clients exactly as the REST pages hold it', async () => {
    const tabId = await gateway.createTab();
    const headers = { authorization: `Bearer ${gateway.tenantA.key}` };
    const sse = openEventSource(`${gateway.baseUrl}/v1/tabs/${tabId}/events`, headers);
    await sse.opened;
    const ws = await openWebSocket(
      `${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`,
      headers,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const send = () =>
      gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        body: { text: 'Hello there, tell me something.' },
        headers: { 'idempotency-key': 'first-message' },
      });
    const accepted = await send();
    expect(accepted.status).toBe(202);
    const { chunkId } = accepted.body as { chunkId: string };
    // A client retry with the same key names the same chunk and runs nothing twice.
    expect((await send()).body).toEqual({ chunkId });

    for (const client of [sse, ws]) {
      await client.waitFor((event) => event.event === 'turn-done', 20_000);
    }
    const page = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=500`);
    const stored = (page.body as { chunks: Chunk[] }).chunks;
    expect(stored[0]).toMatchObject({ id: chunkId, role: 'user', seq: 1 });
    expect(stored.filter((chunk) => chunk.role === 'user')).toHaveLength(1);
    expect(stored.some((chunk) => chunk.role === 'assistant')).toBe(true);
    for (const client of [sse, ws]) {
      expect(sealsOf(client.events)).toEqual(stored);
      // Every streamed block's deltas add up to its sealed text.
      const texts = new Map<string, string>();
      for (const event of client.events) {
        const data = event.data as { id: string; offset: number; text: string };
        if (event.event === 'chunk-open') texts.set(data.id, '');
        if (event.event === 'chunk-delta') {
          expect(data.offset).toBe(texts.get(data.id)?.length);
          texts.set(data.id, texts.get(data.id) + data.text);
        }
      }
      for (const chunk of stored) {
        if (texts.has(chunk.id))
          expect(texts.get(chunk.id)).toBe((chunk.data as { text: string }).text);
      }
      expect(texts.size).toBeGreaterThan(0);
      client.close();
    }
    const tab = await gateway.request('GET', `/v1/tabs/${tabId}`);
    expect(tab.body).toMatchObject({ tab: { status: 'idle', lastSeq: stored.length } });
    const context = await gateway.request('GET', `/v1/tabs/${tabId}/context`);
    const { request, source } = context.body as {
      request: { tools?: { name: string }[] };
      source: string;
    };
    expect(validateRequest(request)).toEqual([]);
    // The running worker answered with its options: its tools are in the request.
    expect(source).toBe('worker');
    expect(request.tools?.map((tool) => tool.name)).toContain('task');
  });

  it('relays turn-retry to EventSource and WebSocket clients, in order, before the answer', async () => {
    const tabId = await gateway.createTab();
    const headers = { authorization: `Bearer ${gateway.tenantA.key}` };
    const sse = openEventSource(`${gateway.baseUrl}/v1/tabs/${tabId}/events`, headers);
    await sse.opened;
    const ws = await openWebSocket(
      `${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`,
      headers,
    );
    for (const client of [sse, ws]) await client.waitFor((event) => event.event === 'stream-live');
    const accepted = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
      body: { text: 'flaky model [[sim: error 529 times=2]] [[sim: text "there it is"]]' },
    });
    expect(accepted.status).toBe(202);

    for (const client of [sse, ws]) {
      await client.waitFor((event) => event.event === 'turn-done', 20_000);
      const kinds = client.events.map((event) => event.event);
      const retries = client.events
        .filter((event) => event.event === 'turn-retry')
        .map((event) => event.data as Record<string, unknown>);
      expect(
        retries.map(({ retry, maxRetries, reason }) => ({ retry, maxRetries, reason })),
      ).toEqual([
        { retry: 1, maxRetries: 3, reason: '529 overloaded_error' },
        { retry: 2, maxRetries: 3, reason: '529 overloaded_error' },
      ]);
      const started = client.events.find((event) => event.event === 'turn-start');
      const turnId = (started?.data as { turnId: string } | undefined)?.turnId;
      expect(turnId).toBeDefined();
      for (const retry of retries) {
        expect(retry).toMatchObject({ tabId, turnId });
        expect(retry.delayMs).toBeGreaterThan(0);
      }
      // Between the turn's start and the answer's first block; then the turn completes.
      expect(kinds.indexOf('turn-start')).toBeLessThan(kinds.indexOf('turn-retry'));
      expect(kinds.lastIndexOf('turn-retry')).toBeLessThan(kinds.indexOf('chunk-open'));
      const done = client.events.find((event) => event.event === 'turn-done');
      expect(done?.data).toMatchObject({ reason: 'completed' });
      expect(sealsOf(client.events).at(-1)).toMatchObject({
        role: 'assistant',
        type: 'text',
        data: { text: 'there it is' },
      });
      client.close();
    }
  });
});
