import { validateRequest } from '@chunklog/anthropic-sim';
import { cancelSubject, INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedError } from '../testing/expected-error';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { everyBackend } from '../testing/test-backends';
import { TurnDriver } from '../testing/turn-driver';

const backends = await everyBackend();

const errorShape = expectedError(expect.any(String));

describe.each(backends)('gateway routes on $name', (backend) => {
  let gateway: GatewayHarness;
  const queued: MessageCommand[] = [];

  beforeAll(async () => {
    gateway = await startGateway(backend, { limits: { bodyBytes: 64 * 1024, textLength: 1000 } });
    await gateway.backend.bus.consume(INTAKE_QUEUE, async (item) => {
      queued.push(item.data as MessageCommand);
      await item.ack();
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function tabCount(key = gateway.tenantA.key): Promise<number> {
    const response = await gateway.request('GET', '/v1/tabs?limit=500', { key });
    return (response.body as { tabs: unknown[] }).tabs.length;
  }

  describe('POST /v1/tabs', () => {
    it('creates a tab with a title and a config', async () => {
      const response = await gateway.request('POST', '/v1/tabs', {
        body: { title: 'hello', config: { maxSteps: 3 } },
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        tab: { title: 'hello', config: { maxSteps: 3 }, status: 'idle', lastSeq: 0 },
      });
    });

    it('creates a tab without a body', async () => {
      const response = await gateway.request('POST', '/v1/tabs');
      expect(response.status).toBe(201);
    });

    it('rejects an invalid config, malformed JSON and an oversized body, storing nothing', async () => {
      const before = await tabCount();
      const invalid = await gateway.request('POST', '/v1/tabs', {
        body: { config: { maxSteps: 0, unknown: true } },
      });
      const malformed = await gateway.request('POST', '/v1/tabs', { rawBody: '{"title": ' });
      const oversized = await gateway.request('POST', '/v1/tabs', {
        body: { title: 'x'.repeat(100 * 1024) },
      });
      expect([invalid.status, malformed.status, oversized.status]).toEqual([400, 400, 413]);
      for (const response of [invalid, malformed, oversized])
        expect(response.body).toEqual(errorShape);
      expect((oversized.body as typeof errorShape).error.code).toBe('payload_too_large');
      expect(await tabCount()).toBe(before);
    });

    it('refuses a thinking budget at or above maxTokens with 400, storing nothing', async () => {
      const before = await tabCount();
      for (const maxTokens of [2000, 4000]) {
        const response = await gateway.request('POST', '/v1/tabs', {
          body: { config: { maxTokens, thinking: { budgetTokens: 4000 } } },
        });
        expect(response.status).toBe(400);
        expect(response.body).toEqual(errorShape);
        expect((response.body as typeof errorShape).error.message).toMatch(/budgetTokens/);
      }
      expect(await tabCount()).toBe(before);
      const fits = await gateway.request('POST', '/v1/tabs', {
        body: { config: { maxTokens: 4001, thinking: { budgetTokens: 4000 } } },
      });
      expect(fits.status).toBe(201);
    });
  });

  describe('GET /v1/tabs', () => {
    it("lists only the caller's tabs, newest first, page by page", async () => {
      const ownIds = [
        await gateway.createTab(),
        await gateway.createTab(),
        await gateway.createTab(),
      ];
      const foreignId = await gateway.createTab(gateway.tenantB);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
        const response = await gateway.request('GET', `/v1/tabs${query}`);
        expect(response.status).toBe(200);
        const body = response.body as { tabs: { id: string }[]; nextCursor: string | null };
        expect(body.tabs.length).toBeLessThanOrEqual(2);
        seen.push(...body.tabs.map((tab) => tab.id));
        cursor = body.nextCursor;
      } while (cursor);
      expect(seen).not.toContain(foreignId);
      expect(new Set(seen).size).toBe(seen.length);
      // Newest first: the three just created lead, in reverse creation order.
      expect(seen.slice(0, 3)).toEqual([...ownIds].reverse());
    });

    it('answers 400 for a limit outside 1..500', async () => {
      for (const limit of ['0', '501', '1000000', 'abc']) {
        const response = await gateway.request('GET', `/v1/tabs?limit=${limit}`);
        expect(response.status, limit).toBe(400);
        expect(response.body).toEqual(errorShape);
      }
    });
  });

  describe('GET and DELETE /v1/tabs/:tabId', () => {
    it('reads a tab with status and lastSeq', async () => {
      const tabId = await gateway.createTab();
      const response = await gateway.request('GET', `/v1/tabs/${tabId}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        tab: { id: tabId, status: 'idle', activeTurnId: null, lastSeq: 0 },
      });
    });

    it('answers 400 for a bad id and 404 for an unknown one', async () => {
      const bad = await gateway.request('GET', '/v1/tabs/not-a-uuid');
      const unknown = await gateway.request('GET', `/v1/tabs/${crypto.randomUUID()}`);
      expect([bad.status, unknown.status]).toEqual([400, 404]);
      expect(unknown.body).toEqual(expectedError('not_found'));
    });

    it('deletes a tab and its chunks; another tenant gets 404 and deletes nothing', async () => {
      const tabId = await gateway.createTab();
      const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
      await driver.startTurn();
      await driver.sealUserText('to be deleted');
      await driver.endTurn();
      await driver.close();
      const foreign = await gateway.request('DELETE', `/v1/tabs/${tabId}`, {
        key: gateway.tenantB.key,
      });
      expect(foreign.status).toBe(404);
      expect((await gateway.request('GET', `/v1/tabs/${tabId}`)).status).toBe(200);
      const deleted = await gateway.request('DELETE', `/v1/tabs/${tabId}`);
      expect(deleted.status).toBe(204);
      expect((await gateway.request('GET', `/v1/tabs/${tabId}`)).status).toBe(404);
      expect((await gateway.request('GET', `/v1/tabs/${tabId}/chunks`)).status).toBe(404);
    });
  });

  describe('PATCH /v1/tabs/:tabId', () => {
    it('renames a tab and leaves its log and config as they were', async () => {
      const created = await gateway.request('POST', '/v1/tabs', {
        body: { title: 'before', config: { maxSteps: 3 } },
      });
      const tabId = (created.body as { tab: { id: string } }).tab.id;
      const renamed = await gateway.request('PATCH', `/v1/tabs/${tabId}`, {
        body: { title: 'after' },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({
        tab: { id: tabId, title: 'after', config: { maxSteps: 3 }, lastSeq: 0 },
      });
      const read = await gateway.request('GET', `/v1/tabs/${tabId}`);
      expect(read.body).toMatchObject({ tab: { title: 'after' } });
    });

    it('refuses a bad body with 400 and another tenant with 404, changing nothing', async () => {
      const tabId = await gateway.createTab();
      const before = (await gateway.request('GET', `/v1/tabs/${tabId}`)).body;
      for (const body of [
        {},
        { title: 7 },
        { title: 'x', config: {} },
        { title: 'x'.repeat(501) },
      ]) {
        const refused = await gateway.request('PATCH', `/v1/tabs/${tabId}`, { body });
        expect(refused.status).toBe(400);
        expect(refused.body).toEqual(expectedError('invalid_input'));
      }
      const nul = await gateway.request('PATCH', `/v1/tabs/${tabId}`, {
        body: { title: 'a\u0000b' },
      });
      expect(nul.status).toBe(400);
      const foreign = await gateway.request('PATCH', `/v1/tabs/${tabId}`, {
        key: gateway.tenantB.key,
        body: { title: 'theirs' },
      });
      expect(foreign.status).toBe(404);
      expect((await gateway.request('GET', `/v1/tabs/${tabId}`)).body).toEqual(before);
    });
  });

  describe('POST /v1/tabs/:tabId/messages', () => {
    async function waitForQueued(chunkId: string): Promise<MessageCommand> {
      for (let attempt = 0; attempt < 200; attempt++) {
        const found = queued.find((command) => command.chunkId === chunkId);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`message ${chunkId} never reached the queue`);
    }

    it('answers 202 with a chunkId and enqueues the message command', async () => {
      const tabId = await gateway.createTab();
      const response = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        body: { text: 'hello' },
      });
      expect(response.status).toBe(202);
      const { chunkId } = response.body as { chunkId: string };
      expect(await waitForQueued(chunkId)).toMatchObject({
        tabId,
        chunkId,
        text: 'hello',
        mode: 'interrupt',
      });
    });

    it('gives the same chunkId for the same Idempotency-Key and enqueues it once', async () => {
      const tabId = await gateway.createTab();
      const otherTabId = await gateway.createTab();
      const send = (tab: string, key: string) =>
        gateway.request('POST', `/v1/tabs/${tab}/messages`, {
          body: { text: 'once', mode: 'enqueue' },
          headers: { 'idempotency-key': key },
        });
      const first = await send(tabId, 'key-1');
      const second = await send(tabId, 'key-1');
      const otherKey = await send(tabId, 'key-2');
      const otherTab = await send(otherTabId, 'key-1');
      const ids = [first, second, otherKey, otherTab].map(
        (response) => (response.body as { chunkId: string }).chunkId,
      );
      expect(ids[0]).toBe(ids[1]);
      expect(new Set(ids).size).toBe(3);
      await waitForQueued(ids[2]!);
      await waitForQueued(ids[3]!);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(queued.filter((command) => command.chunkId === ids[0])).toHaveLength(1);
    });

    it('answers 409 in reject mode while a turn runs, and enqueues nothing', async () => {
      const tabId = await gateway.createTab();
      const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
      await driver.startTurn();
      const rejected = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        body: { text: 'not now', mode: 'reject' },
      });
      expect(rejected.status).toBe(409);
      expect(rejected.body).toEqual(expectedError('conflict'));
      const interrupting = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        body: { text: 'but this', mode: 'interrupt' },
      });
      expect(interrupting.status).toBe(202);
      await waitForQueued((interrupting.body as { chunkId: string }).chunkId);
      expect(queued.filter((command) => command.text === 'not now')).toHaveLength(0);
      await driver.endTurn();
      await driver.close();
    });

    it('rejects bad input with 4xx and enqueues nothing', async () => {
      const tabId = await gateway.createTab();
      const foreignTabId = await gateway.createTab(gateway.tenantB);
      const before = queued.length;
      const cases = [
        { path: tabId, body: { text: '' }, status: 400 },
        { path: tabId, body: { text: 'x'.repeat(1001) }, status: 400 },
        { path: tabId, body: { text: 'hi', mode: 'shout' }, status: 400 },
        { path: tabId, body: { text: 'nul \u0000 inside' }, status: 400 },
        { path: tabId, body: { text: ' \n\t\u00a0 ' }, status: 400 },
        { path: tabId, body: { text: 'hi', extra: 1 }, status: 400 },
        { path: tabId, rawBody: '{"text":', status: 400 },
        { path: tabId, body: { text: 'x'.repeat(70 * 1024) }, status: 413 },
        { path: 'nope', body: { text: 'hi' }, status: 400 },
        { path: crypto.randomUUID(), body: { text: 'hi' }, status: 404 },
        { path: foreignTabId, body: { text: 'hi' }, status: 404 },
      ];
      for (const { path, status, ...body } of cases) {
        const response = await gateway.request('POST', `/v1/tabs/${path}/messages`, body);
        expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(status);
        expect(response.body).toEqual(errorShape);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(queued.length).toBe(before);
    });
  });

  describe('POST /v1/tabs/:tabId/cancel', () => {
    it("records the cancel and publishes it on the tab's cancel subject", async () => {
      const tabId = await gateway.createTab();
      const received: unknown[] = [];
      const subscription = await gateway.backend.bus.subscribe(cancelSubject(tabId), (payload) =>
        received.push(payload),
      );
      const response = await gateway.request('POST', `/v1/tabs/${tabId}/cancel`);
      expect(response.status).toBe(202);
      expect(await gateway.backend.store.cancelGeneration(tabId)).toBe(1);
      for (let attempt = 0; attempt < 100 && received.length === 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(received).toEqual([{ tabId, generation: 1 }]);
      const foreign = await gateway.request('POST', `/v1/tabs/${tabId}/cancel`, {
        key: gateway.tenantB.key,
      });
      expect(foreign.status).toBe(404);
      expect(await gateway.backend.store.cancelGeneration(tabId)).toBe(1);
      await subscription.stop();
    });

    it('stamps messages with the cancels answered before them', async () => {
      const tabId = await gateway.createTab();
      const send = async () => {
        const response = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
          body: { text: 'stamped' },
        });
        const { chunkId } = response.body as { chunkId: string };
        for (let attempt = 0; attempt < 200; attempt++) {
          const found = queued.find((command) => command.chunkId === chunkId);
          if (found) return found;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        throw new Error(`message ${chunkId} never reached the queue`);
      };
      expect((await send()).cancelGeneration).toBe(0);
      expect((await gateway.request('POST', `/v1/tabs/${tabId}/cancel`)).status).toBe(202);
      expect((await send()).cancelGeneration).toBe(1);
    });
  });

  describe('GET /v1/tabs/:tabId/chunks', () => {
    it('pages backwards from the tail and forwards after a seq, with total and hasMore', async () => {
      const tabId = await gateway.createTab();
      const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
      await driver.startTurn();
      for (let index = 1; index <= 7; index++) await driver.sealUserText(`message ${index}`);
      await driver.endTurn();
      await driver.close();
      const seqs = (body: unknown) =>
        (body as { chunks: { seq: number }[] }).chunks.map((c) => c.seq);

      const tail = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=3`);
      expect(tail.status).toBe(200);
      expect(seqs(tail.body)).toEqual([5, 6, 7]);
      expect(tail.body).toMatchObject({ total: 7, hasMore: true });

      const before = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=3&before=3`);
      expect(seqs(before.body)).toEqual([1, 2]);
      expect(before.body).toMatchObject({ hasMore: false });

      const after = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?after=5`);
      expect(seqs(after.body)).toEqual([6, 7]);
      expect((after.body as { chunks: unknown[] }).chunks).toEqual(driver.sealed.slice(5));
    });

    it('answers 400 for huge limits, bad seqs and before with after', async () => {
      const tabId = await gateway.createTab();
      for (const query of ['limit=501', 'limit=0', 'before=-1', 'after=x', 'before=3&after=1']) {
        const response = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?${query}`);
        expect(response.status, query).toBe(400);
        expect(response.body).toEqual(errorShape);
      }
    });
  });

  describe('GET /v1/tabs/:tabId/context', () => {
    it("returns the next step's request, valid for the API, with the tab's system prompt", async () => {
      const created = await gateway.request('POST', '/v1/tabs', {
        body: { config: { system: 'Be brief.', model: 'claude-test' } },
      });
      const tabId = (created.body as { tab: { id: string } }).tab.id;
      const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
      await driver.startTurn();
      await driver.sealUserText('What is 2+2?');
      await driver.openBlock();
      await driver.delta('4');
      await driver.sealOpen();
      await driver.sealUserText('And 3+3?');
      await driver.endTurn();
      await driver.close();
      const response = await gateway.request('GET', `/v1/tabs/${tabId}/context`);
      expect(response.status).toBe(200);
      const { request, source } = response.body as {
        request: Record<string, unknown>;
        source: string;
      };
      // No worker runs on this bus: the gateway's defaults, without tools, and it says so.
      expect(source).toBe('gateway-defaults');
      expect(request.tools).toBeUndefined();
      expect(validateRequest(request)).toEqual([]);
      expect(request.model).toBe('claude-test');
      expect(JSON.stringify(request.system)).toContain('Be brief.');
      const messages = request.messages as { role: string }[];
      expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
      const foreign = await gateway.request('GET', `/v1/tabs/${tabId}/context`, {
        key: gateway.tenantB.key,
      });
      expect(foreign.status).toBe(404);
    });

    it('raises max_tokens above a thinking budget the default limit cannot hold, as the worker does', async () => {
      const created = await gateway.request('POST', '/v1/tabs', {
        body: { config: { thinking: { budgetTokens: 8000 } } },
      });
      expect(created.status).toBe(201);
      const tabId = (created.body as { tab: { id: string } }).tab.id;
      const response = await gateway.request('GET', `/v1/tabs/${tabId}/context`);
      expect(response.status).toBe(200);
      const request = (response.body as { request: Record<string, unknown> }).request;
      // The default limit is 4096: the budget plus 1024 tokens of room for the answer.
      expect(request.max_tokens).toBe(9024);
      expect(request.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
      expect(validateRequest(request)).toEqual([]);
    });
  });

  describe('health, metrics and docs', () => {
    it('answers /healthz and /readyz without a key', async () => {
      expect((await gateway.request('GET', '/healthz', { key: null })).body).toEqual({
        status: 'ok',
      });
      const ready = await gateway.request('GET', '/readyz', { key: null });
      expect(ready).toMatchObject({ status: 200, body: { status: 'ok' } });
    });

    it('serves Prometheus metrics that count requests', async () => {
      await gateway.request('GET', '/healthz', { key: null });
      const response = await gateway.request('GET', '/metrics', { key: null });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/plain');
      expect(String(response.body)).toMatch(/chunklog_http_requests_total\{[^}]*route="\/healthz"/);
      expect(String(response.body)).toContain('chunklog_stream_connections');
    });

    it('leaves turns and tokens to the workers: a turn-done it relays counts nowhere here', async () => {
      // Every gateway hears every turn-done; counting them here would multiply each turn by the
      // number of gateways in a deployment's sum.
      const tabId = await gateway.createTab();
      const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
      await driver.startTurn();
      await driver.endTurn({
        inputTokens: 10,
        outputTokens: 5,
        cacheReadInputTokens: 700,
        cacheCreationInputTokens: 30,
      });
      await driver.close();
      const text = String((await gateway.request('GET', '/metrics', { key: null })).body);
      expect(text).toContain('chunklog_http_requests_total');
      expect(text).not.toMatch(/chunklog_(turns|model_tokens)_total/);
    });

    it('serves the OpenAPI document with every route of the API', async () => {
      const response = await gateway.request('GET', '/docs/json', { key: null });
      expect(response.status).toBe(200);
      const paths = Object.keys((response.body as { paths: object }).paths);
      for (const path of [
        '/v1/tabs',
        '/v1/tabs/{tabId}',
        '/v1/tabs/{tabId}/messages',
        '/v1/tabs/{tabId}/cancel',
        '/v1/tabs/{tabId}/chunks',
        '/v1/tabs/{tabId}/events',
        '/v1/tabs/{tabId}/ws',
        '/v1/tabs/{tabId}/context',
        '/v1/tabs/{tabId}/stream-tickets',
        '/v1/webhooks',
        '/v1/webhooks/{endpointId}',
        '/v1/webhooks/{endpointId}/rotate-secret',
        '/v1/webhooks/{endpointId}/deliveries',
      ]) {
        expect(paths).toContain(path);
      }
      // /context's `source` extension is documented, and optional (older clients ignore it).
      const context = (response.body as { paths: Record<string, unknown> }).paths[
        '/v1/tabs/{tabId}/context'
      ] as {
        get: {
          responses: Record<
            string,
            {
              content: Record<
                string,
                { schema: { properties: Record<string, unknown>; required?: string[] } }
              >;
            }
          >;
        };
      };
      const contextSchema = context.get.responses['200']?.content['application/json']?.schema;
      expect(contextSchema?.properties.source).toMatchObject({
        enum: ['worker', 'gateway-defaults'],
      });
      expect(contextSchema?.required ?? []).not.toContain('source');
      // A message refused while NATS is down is a 503 a client retries on: documented as such.
      const messages = (response.body as { paths: Record<string, unknown> }).paths[
        '/v1/tabs/{tabId}/messages'
      ] as { post: { responses: Record<string, unknown> } };
      expect(Object.keys(messages.post.responses)).toContain('503');
      const ui = await fetch(`${gateway.baseUrl}/docs`, { redirect: 'follow' });
      expect(ui.status).toBe(200);
      expect(await ui.text()).toContain('swagger');
    });
  });
});
