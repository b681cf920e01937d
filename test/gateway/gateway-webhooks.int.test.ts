import { randomUUID } from 'node:crypto';
import { startWebhookReceiver, type WebhookReceiver } from '@chunklog/agent-worker/testing';
import {
  type Tab,
  type WebhookDelivery,
  type WebhookEndpoint,
  WebhookEventSchema,
} from '@chunklog/chunk-core';
import {
  everyBackend,
  expectedError,
  type GatewayHarness,
  startGateway,
} from '@chunklog/gateway/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedWorker } from '../support/simulated-worker';

const backends = await everyBackend();

/** A hanging receiver costs an attempt this long; retries follow within 100 ms. */
const webhooks = {
  pollMs: 50,
  attemptTimeoutMs: 1_000,
  backoff: { baseMs: 20, maxMs: 100 },
  maxAgeMs: 60_000,
  retentionMs: 86_400_000,
  // The receivers listen on loopback, which only an allowlist opens.
  allowedHosts: ['127.0.0.1/32'],
};

describe.each(backends)('webhooks on $name', (backend) => {
  let gateway: GatewayHarness;
  let running: Awaited<ReturnType<typeof startSimulatedWorker>> | undefined;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    gateway = await startGateway(backend, { webhookAllowedHosts: ['127.0.0.1/32'] });
    running = await startSimulatedWorker(gateway, { webhooks });
  });
  afterAll(async () => {
    await running?.close();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await gateway?.close();
  });

  async function createEndpoint(url: string, eventTypes: string[], key = gateway.tenantA.key) {
    const response = await gateway.request('POST', '/v1/webhooks', {
      key,
      body: { url, eventTypes },
    });
    expect(response.status).toBe(201);
    return response.body as { endpoint: WebhookEndpoint; secret: string };
  }

  async function deliveriesOf(endpointId: string): Promise<WebhookDelivery[]> {
    const response = await gateway.request('GET', `/v1/webhooks/${endpointId}/deliveries`);
    expect(response.status).toBe(200);
    return (response.body as { deliveries: WebhookDelivery[] }).deliveries;
  }

  it('creates, lists, rotates and deletes endpoints, showing a secret only when it is made', async () => {
    const { endpoint, secret } = await createEndpoint('https://example.com/hook', [
      'turn.completed',
      'turn.failed',
    ]);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toMatchObject({
      url: 'https://example.com/hook',
      eventTypes: ['turn.completed', 'turn.failed'],
    });
    const listed = await gateway.request('GET', '/v1/webhooks');
    expect(listed).toMatchObject({ status: 200, body: { endpoints: [endpoint] } });
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const rotated = await gateway.request('POST', `/v1/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const next = rotated.body as { endpoint: WebhookEndpoint; secret: string };
    expect(next.secret).toMatch(/^whsec_/);
    expect(next.secret).not.toBe(secret);
    expect(next.endpoint.id).toBe(endpoint.id);

    expect((await gateway.request('DELETE', `/v1/webhooks/${endpoint.id}`)).status).toBe(204);
    expect((await gateway.request('GET', '/v1/webhooks')).body).toEqual({ endpoints: [] });
    const again = await gateway.request('DELETE', `/v1/webhooks/${endpoint.id}`);
    expect(again).toMatchObject({ status: 404, body: expectedError('not_found') });
  });

  it('answers 400 for a bad URL, an unknown event type or no event type, and stores nothing', async () => {
    for (const body of [
      { url: 'not a url', eventTypes: ['turn.completed'] },
      { url: 'ftp://example.com/hook', eventTypes: ['turn.completed'] },
      { url: 'https://example.com/hook', eventTypes: ['turn.started'] },
      { url: 'https://example.com/hook', eventTypes: [] },
      { url: 'https://example.com/hook' },
      { url: 'https://example.com/hook', eventTypes: ['turn.completed'], secret: 'whsec_mine' },
    ]) {
      const response = await gateway.request('POST', '/v1/webhooks', {
        key: gateway.tenantB.key,
        body,
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual(expectedError('invalid_input'));
    }
    const malformed = await gateway.request('GET', '/v1/webhooks/not-a-uuid/deliveries');
    expect(malformed.status).toBe(400);
    const listed = await gateway.request('GET', '/v1/webhooks', { key: gateway.tenantB.key });
    expect(listed.body).toEqual({ endpoints: [] });
  });

  describe('with an Idempotency-Key', () => {
    const create = (idempotencyKey: string, body: unknown, key = gateway.tenantA.key) =>
      gateway.request('POST', '/v1/webhooks', {
        key,
        body,
        headers: { 'idempotency-key': idempotencyKey },
      });
    const endpointCount = async (key = gateway.tenantA.key) =>
      ((await gateway.request('GET', '/v1/webhooks', { key })).body as { endpoints: unknown[] })
        .endpoints.length;
    const body = { url: 'https://example.com/once', eventTypes: ['turn.completed'] };

    it('answers a replay with the stored 201, same endpoint and secret, marked Idempotent-Replayed', async () => {
      const idempotencyKey = randomUUID();
      const before = await endpointCount();
      const first = await create(idempotencyKey, body);
      const again = await create(idempotencyKey, body);
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(first.body).toMatchObject({
        endpoint: body,
        secret: expect.stringMatching(/^whsec_/),
      });
      expect(await endpointCount()).toBe(before + 1);
    });

    it('answers 422 idempotency_key_reused to another URL or event list, and creates nothing', async () => {
      const idempotencyKey = randomUUID();
      expect((await create(idempotencyKey, body)).status).toBe(201);
      const before = await endpointCount();
      for (const other of [
        { ...body, url: 'https://example.com/other' },
        { ...body, eventTypes: ['turn.completed', 'turn.failed'] },
      ]) {
        const refused = await create(idempotencyKey, other);
        expect(refused.status).toBe(422);
        expect(refused.body).toEqual(expectedError('idempotency_key_reused'));
      }
      expect(await endpointCount()).toBe(before);
    });

    it('gives concurrent requests with one key one endpoint, and keeps keys per tenant', async () => {
      const idempotencyKey = randomUUID();
      const before = await endpointCount();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => create(idempotencyKey, body)),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
      const created = answers.map(
        (answer) => answer.body as { endpoint: WebhookEndpoint; secret: string },
      );
      expect(new Set(created.map(({ endpoint }) => endpoint.id)).size).toBe(1);
      expect(new Set(created.map(({ secret }) => secret)).size).toBe(1);
      expect(await endpointCount()).toBe(before + 1);

      const theirs = await create(idempotencyKey, body, gateway.tenantB.key);
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      const theirId = (theirs.body as { endpoint: WebhookEndpoint }).endpoint.id;
      expect(theirId).not.toBe(created[0]!.endpoint.id);
      // Tenant B keeps no endpoint: the tests below count on it.
      const deleted = await gateway.request('DELETE', `/v1/webhooks/${theirId}`, {
        key: gateway.tenantB.key,
      });
      expect(deleted.status).toBe(204);
    });
  });

  it("answers 404 for another tenant's endpoint on every route, changing nothing", async () => {
    const { endpoint } = await createEndpoint('https://example.com/a', ['turn.completed']);
    const key = gateway.tenantB.key;
    for (const [method, path] of [
      ['DELETE', `/v1/webhooks/${endpoint.id}`],
      ['POST', `/v1/webhooks/${endpoint.id}/rotate-secret`],
      ['GET', `/v1/webhooks/${endpoint.id}/deliveries`],
      ['GET', `/v1/webhooks/${randomUUID()}/deliveries`],
    ] as const) {
      const response = await gateway.request(method, path, { key });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body).toEqual(expectedError('not_found'));
    }
    expect((await gateway.request('GET', '/v1/webhooks', { key })).body).toEqual({ endpoints: [] });
    const listed = await gateway.request('GET', '/v1/webhooks');
    expect((listed.body as { endpoints: WebhookEndpoint[] }).endpoints).toContainEqual(endpoint);
    await gateway.request('DELETE', `/v1/webhooks/${endpoint.id}`);
  });

  it("delivers a turn's end through a 500 and a timeout, signed, with the history in the API", async () => {
    let releaseSecond = () => {};
    let releaseThird = () => {};
    const receiver = await startWebhookReceiver((count) => {
      if (count === 1) return 500;
      // The second attempt hangs past the dispatcher's timeout; its answer never counts.
      if (count === 2) return new Promise((resolve) => (releaseSecond = () => resolve(200)));
      return new Promise((resolve) => (releaseThird = () => resolve(200)));
    });
    receivers.push(receiver);
    const { endpoint, secret } = await createEndpoint(receiver.url, ['turn.completed']);
    // Another endpoint of the tenant, for failed turns only: a completed turn sends it nothing.
    const failedOnly = await createEndpoint(receiver.url, ['turn.failed']);

    const tabId = await gateway.createTab();
    const sent = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
      body: { text: 'Tell me something [[sim: words 12]]' },
    });
    expect(sent.status).toBe(202);

    const first = await receiver.request(1);
    await receiver.request(2);
    // While the second attempt hangs, the API shows the first one's answer.
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { status: 'pending', attempts: 2, lastStatusCode: 500, lastError: 'HTTP 500' },
    ]);
    const third = await receiver.request(3);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      {
        status: 'pending',
        attempts: 3,
        lastStatusCode: null,
        lastError: 'no answer within 1000 ms',
      },
    ]);
    releaseThird();
    releaseSecond();
    let deliveries = await deliveriesOf(endpoint.id);
    for (let poll = 0; deliveries[0]?.status !== 'delivered' && poll < 200; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      deliveries = await deliveriesOf(endpoint.id);
    }
    const [delivery] = deliveries;
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 3,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
      eventType: 'turn.completed',
      tabId,
    });
    expect(delivery!.deliveredAt).toBeGreaterThanOrEqual(delivery!.createdAt);

    // Every attempt is the same message, signed afresh; the library verifies each.
    const verifier = new Webhook(secret);
    const events = [first, third].map((request) => {
      expect(request.headers['webhook-id']).toBe(delivery!.messageId);
      return WebhookEventSchema.parse(
        verifier.verify(request.body, request.headers as Record<string, string>),
      );
    });
    expect(events[1]).toEqual(events[0]);
    const tab = (await gateway.request('GET', `/v1/tabs/${tabId}`)).body as { tab: Tab };
    expect(events[0]).toMatchObject({
      type: 'turn.completed',
      data: {
        tabId,
        turnId: delivery!.turnId,
        reason: 'completed',
        usage: tab.tab.usage,
        lastSeq: tab.tab.lastSeq,
      },
    });
    expect(tab.tab.lastSeq).toBeGreaterThan(1);
    expect(await deliveriesOf(failedOnly.endpoint.id)).toEqual([]);
    expect(receiver.received).toHaveLength(3);
  });
});
