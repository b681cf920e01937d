import { INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedError } from '../testing/expected-error';
import { type GatewayHarness, type JsonResponse, startGateway } from '../testing/gateway-harness';
import { everyBackend } from '../testing/test-backends';
import { TurnDriver } from '../testing/turn-driver';

const backends = await everyBackend();

const replayed = (response: JsonResponse) => response.headers.get('idempotent-replayed');

describe.each(backends)('Idempotency-Key on $name', (backend) => {
  let gateway: GatewayHarness;
  const queued: MessageCommand[] = [];

  beforeAll(async () => {
    gateway = await startGateway(backend);
    await gateway.backend.bus.consume(INTAKE_QUEUE, async (item) => {
      queued.push(item.data as MessageCommand);
      await item.ack();
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** Every command queued for `tabId` so far, once the queue has delivered `count` of them. */
  async function queuedFor(tabId: string, count: number): Promise<MessageCommand[]> {
    await expect
      .poll(() => queued.filter((command) => command.tabId === tabId).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(count);
    // Time for a second enqueue to show up, had one slipped through.
    await new Promise((resolve) => setTimeout(resolve, 100));
    return queued.filter((command) => command.tabId === tabId);
  }

  describe('POST /v1/tabs/:tabId/messages', () => {
    function send(tabId: string, key: string, body: unknown) {
      return gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        body,
        headers: { 'idempotency-key': key },
      });
    }

    it('answers a replay as the first time, marked Idempotent-Replayed, and enqueues once', async () => {
      const tabId = await gateway.createTab();
      const first = await send(tabId, 'same', { text: 'hello', mode: 'enqueue' });
      // Key order and JSON spacing are no part of the request.
      const again = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        rawBody: '{ "mode": "enqueue",  "text": "hello" }',
        headers: { 'idempotency-key': 'same', 'content-type': 'application/json' },
      });
      expect(first.status).toBe(202);
      expect(replayed(first)).toBeNull();
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(replayed(again)).toBe('true');
      expect(await queuedFor(tabId, 1)).toHaveLength(1);
    });

    it('takes a default spelled out as the same request', async () => {
      const tabId = await gateway.createTab();
      const first = await send(tabId, 'k', { text: 'hi' });
      const again = await send(tabId, 'k', { text: 'hi', mode: 'interrupt' });
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(replayed(again)).toBe('true');
    });

    it('answers 422 idempotency_key_reused to another text or mode, and keeps the first', async () => {
      const tabId = await gateway.createTab();
      const first = await send(tabId, 'reused', { text: 'first', mode: 'enqueue' });
      expect(first.status).toBe(202);
      for (const body of [
        { text: 'second', mode: 'enqueue' },
        { text: 'first', mode: 'interrupt' },
      ]) {
        const refused = await send(tabId, 'reused', body);
        expect(refused.status).toBe(422);
        expect(refused.body).toEqual(expectedError('idempotency_key_reused'));
        expect(replayed(refused)).toBeNull();
      }
      const commands = await queuedFor(tabId, 1);
      expect(commands.map((command) => command.text)).toEqual(['first']);
    });

    it('runs a request again whose first try was refused (409), and then accepts it', async () => {
      const tabId = await gateway.createTab();
      const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
      await driver.startTurn();
      const refused = await send(tabId, 'later', { text: 'when idle', mode: 'reject' });
      expect(refused.status).toBe(409);
      // Another body is still another request: the key is taken by the refused one.
      expect((await send(tabId, 'later', { text: 'other', mode: 'reject' })).status).toBe(422);
      await driver.endTurn();
      await driver.close();
      const accepted = await send(tabId, 'later', { text: 'when idle', mode: 'reject' });
      expect(accepted.status).toBe(202);
      expect(replayed(accepted)).toBeNull();
      expect((await queuedFor(tabId, 1)).map((command) => command.text)).toEqual(['when idle']);
    });

    it('keeps keys per tenant: the same key on a tab of another tenant is its own', async () => {
      const tabA = await gateway.createTab();
      const tabB = await gateway.createTab(gateway.tenantB);
      expect((await send(tabA, 'shared', { text: 'a' })).status).toBe(202);
      const other = await gateway.request('POST', `/v1/tabs/${tabB}/messages`, {
        key: gateway.tenantB.key,
        body: { text: 'b' },
        headers: { 'idempotency-key': 'shared' },
      });
      expect(other.status).toBe(202);
      expect(replayed(other)).toBeNull();
    });
  });

  describe('POST /v1/tabs', () => {
    function create(key: string, body: unknown, tenantKey = gateway.tenantA.key) {
      return gateway.request('POST', '/v1/tabs', {
        key: tenantKey,
        body,
        headers: { 'idempotency-key': key },
      });
    }

    async function tabCount(tenantKey = gateway.tenantA.key): Promise<number> {
      const response = await gateway.request('GET', '/v1/tabs?limit=500', { key: tenantKey });
      return (response.body as { tabs: unknown[] }).tabs.length;
    }

    it('returns the same tab to a replay, marked Idempotent-Replayed, and creates one', async () => {
      const before = await tabCount();
      const body = { title: 'once', config: { maxTokens: 1000 } };
      const first = await create('tab-key', body);
      const again = await create('tab-key', body);
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(replayed(first)).toBeNull();
      expect(replayed(again)).toBe('true');
      expect(await tabCount()).toBe(before + 1);
    });

    it('answers 422 idempotency_key_reused to another title or config, and creates nothing', async () => {
      expect((await create('tab-reused', { title: 'one' })).status).toBe(201);
      const before = await tabCount();
      for (const body of [{ title: 'two' }, { title: 'one', config: { maxTokens: 10 } }, null]) {
        const refused = await create('tab-reused', body);
        expect(refused.status).toBe(422);
        expect(refused.body).toEqual(expectedError('idempotency_key_reused'));
      }
      expect(await tabCount()).toBe(before);
    });

    it('gives concurrent requests with one key one tab', async () => {
      const before = await tabCount();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => create('tab-race', { title: 'race' })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
      const ids = new Set(answers.map((answer) => (answer.body as { tab: { id: string } }).tab.id));
      expect(ids.size).toBe(1);
      expect(await tabCount()).toBe(before + 1);
    });

    it('keeps keys per tenant', async () => {
      const mine = await create('tenant-key', { title: 'mine' });
      const theirs = await create('tenant-key', { title: 'theirs' }, gateway.tenantB.key);
      expect(theirs.status).toBe(201);
      expect((theirs.body as { tab: { id: string } }).tab.id).not.toBe(
        (mine.body as { tab: { id: string } }).tab.id,
      );
    });
  });
});
