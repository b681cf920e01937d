/**
 * The webhook cases of the ChunkStore contract (endpoints, the outbox the lease release writes,
 * the dispatcher's claim), run inside describeChunkStoreContract on every adapter. The outbox
 * is shared by the whole store, so each case claims with a lease and deletes its endpoints
 * before it ends: no other case sees its deliveries due.
 */
import { randomUUID } from 'node:crypto';
import {
  InvalidInputError,
  NotFoundError,
  type TurnDoneReason,
  type Usage,
} from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import type { ChunkStore } from '../chunk-store';
import type { WebhookAttemptResult } from '../webhooks/webhook-outbox';
import { rejection } from './rejection';

const secret = `whsec_${Buffer.from('a test secret of 32 bytes, ok!!!').toString('base64')}`;
const usage: Usage = {
  inputTokens: 1,
  outputTokens: 2,
  cacheReadInputTokens: 3,
  cacheCreationInputTokens: 4,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function describeWebhookStoreContract(storeOf: () => ChunkStore): void {
  describe('webhooks', () => {
    async function newTenant(): Promise<string> {
      return (await storeOf().createTenant({ name: `tenant-${randomUUID()}` })).id;
    }

    async function newEndpoint(tenantId: string, eventTypes = ['turn.completed']) {
      const created = await storeOf().createWebhookEndpoint({
        tenantId,
        url: 'http://127.0.0.1:9/hook',
        eventTypes,
        secret,
      });
      expect(created.secret).toBe(secret);
      return created.endpoint;
    }

    /** A tab of `tenantId` whose turn ran as `owner` and ended with `reason`, one chunk long. */
    async function endTurn(tenantId: string, reason: TurnDoneReason = 'completed') {
      const store = storeOf();
      const tab = await store.createTab({ tenantId });
      const turnId = randomUUID();
      await store.acquireLease(tab.id, { owner: 'worker-a', turnId, leaseMs: 30_000 });
      await store.append(tab.id, [
        {
          id: randomUUID(),
          tabId: tab.id,
          turnId,
          step: 0,
          role: 'user',
          type: 'text',
          data: { text: 'hi' },
        },
      ]);
      const released = await store.releaseLease(tab.id, {
        owner: 'worker-a',
        usage,
        ended: { turnId, reason },
      });
      expect(released).toBe(true);
      return { tab, turnId };
    }

    it('creates, lists, rotates and deletes endpoints within their tenant', async () => {
      const store = storeOf();
      const tenant = await newTenant();
      const other = await newTenant();
      const endpoint = await newEndpoint(tenant, ['turn.failed', 'turn.completed', 'turn.failed']);
      expect(endpoint).toMatchObject({
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['turn.failed', 'turn.completed'],
      });
      expect(endpoint).not.toHaveProperty('secret');
      expect(await store.listWebhookEndpoints(tenant)).toEqual([endpoint]);
      expect(await store.listWebhookEndpoints(other)).toEqual([]);

      const rotated = await store.rotateWebhookSecret(endpoint.id, {
        tenantId: tenant,
        secret: `${secret.slice(0, -4)}AAA=`,
      });
      expect(rotated.secretSetAt).toBeGreaterThanOrEqual(endpoint.secretSetAt);
      // Called one by one: a rejection must not wait unheard while an earlier one is awaited.
      for (const call of [
        () => store.rotateWebhookSecret(endpoint.id, { tenantId: other, secret }),
        () => store.deleteWebhookEndpoint(endpoint.id, { tenantId: other }),
        () => store.listWebhookDeliveries(endpoint.id, { tenantId: other, limit: 10 }),
        () => store.deleteWebhookEndpoint('not-a-uuid', { tenantId: tenant }),
        () => store.listWebhookDeliveries(randomUUID(), { tenantId: tenant, limit: 10 }),
      ]) {
        expect(await rejection(call())).toBeInstanceOf(NotFoundError);
      }
      expect(
        await store.listWebhookDeliveries(endpoint.id, { tenantId: tenant, limit: 10 }),
      ).toEqual([]);
      await store.deleteWebhookEndpoint(endpoint.id, { tenantId: tenant });
      expect(await store.listWebhookEndpoints(tenant)).toEqual([]);
      expect(
        await rejection(store.deleteWebhookEndpoint(endpoint.id, { tenantId: tenant })),
      ).toBeInstanceOf(NotFoundError);
    });

    it('refuses bad endpoint input and stores nothing', async () => {
      const store = storeOf();
      const tenantId = await newTenant();
      const valid = {
        tenantId,
        url: 'https://example.com/hook',
        eventTypes: ['turn.completed'],
        secret,
      };
      for (const input of [
        { ...valid, url: 'not a url' },
        { ...valid, url: 'ftp://example.com/hook' },
        { ...valid, url: `https://example.com/${'x'.repeat(2100)}` },
        { ...valid, eventTypes: ['turn.started'] },
        { ...valid, eventTypes: [] },
        { ...valid, secret: 'plain' },
      ]) {
        expect(await rejection(store.createWebhookEndpoint(input))).toBeInstanceOf(
          InvalidInputError,
        );
      }
      expect(await store.listWebhookEndpoints(tenantId)).toEqual([]);
    });

    it('creates an endpoint with a chosen id once: again, it is returned as it stands with its secret', async () => {
      const store = storeOf();
      const tenantId = await newTenant();
      const id = randomUUID();
      const input = { tenantId, url: 'https://example.com/hook', eventTypes: ['turn.completed'] };
      const created = await store.createWebhookEndpoint({ ...input, secret, id });
      expect(created).toMatchObject({ endpoint: { id, url: input.url }, secret });
      const again = await store.createWebhookEndpoint({
        ...input,
        secret: `whsec_${'B'.repeat(32)}`,
        id,
      });
      expect(again).toEqual(created);
      expect(await store.listWebhookEndpoints(tenantId)).toHaveLength(1);
      const other = await newTenant();
      expect(
        await rejection(store.createWebhookEndpoint({ ...input, tenantId: other, secret, id })),
      ).toBeInstanceOf(NotFoundError);
      expect(await store.listWebhookEndpoints(other)).toEqual([]);
    });

    it("queues a turn's end for each subscribed endpoint of its tenant with the release", async () => {
      const store = storeOf();
      const tenant = await newTenant();
      const completed = await newEndpoint(tenant, ['turn.completed']);
      const failed = await newEndpoint(tenant, ['turn.failed', 'turn.cancelled']);
      const otherTenant = await newTenant();
      const foreign = await newEndpoint(otherTenant, ['turn.completed']);

      const { tab, turnId } = await endTurn(tenant, 'max_steps');
      const deliveries = await store.listWebhookDeliveries(completed.id, {
        tenantId: tenant,
        limit: 10,
      });
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({
        eventType: 'turn.completed',
        tabId: tab.id,
        turnId,
        status: 'pending',
        attempts: 0,
        lastStatusCode: null,
        deliveredAt: null,
      });
      expect(deliveries[0]!.messageId).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(await store.listWebhookDeliveries(failed.id, { tenantId: tenant, limit: 10 })).toEqual(
        [],
      );
      // Another tenant's endpoint hears nothing of this tenant's turns.
      expect(
        await store.listWebhookDeliveries(foreign.id, { tenantId: otherTenant, limit: 10 }),
      ).toEqual([]);

      // Cancelled and failed turns go to the endpoint that asked for those; a turn paused for a
      // decision to the one that asked for approval requests.
      const approvals = await newEndpoint(tenant, ['approval.requested']);
      await endTurn(tenant, 'awaiting_approval');
      expect(
        (await store.listWebhookDeliveries(approvals.id, { tenantId: tenant, limit: 10 })).map(
          (delivery) => delivery.eventType,
        ),
      ).toEqual(['approval.requested']);
      await endTurn(tenant, 'cancelled');
      await endTurn(tenant, 'error');
      const failures = await store.listWebhookDeliveries(failed.id, {
        tenantId: tenant,
        limit: 10,
      });
      expect(failures.map((delivery) => delivery.eventType)).toEqual([
        'turn.failed',
        'turn.cancelled',
      ]);

      const claimed = (await store.claimWebhookDeliveries({ limit: 1000, leaseMs: 60_000 })).filter(
        (delivery) => delivery.id === deliveries[0]!.id,
      );
      expect(claimed).toHaveLength(1);
      expect(claimed[0]).toMatchObject({
        messageId: deliveries[0]!.messageId,
        url: completed.url,
        secret,
        attempt: 1,
        event: {
          type: 'turn.completed',
          data: { tabId: tab.id, turnId, reason: 'max_steps', usage, lastSeq: 1 },
        },
      });
      expect(new Date(claimed[0]!.event.timestamp).toISOString()).toBe(claimed[0]!.event.timestamp);

      for (const endpoint of [completed, failed]) {
        await store.deleteWebhookEndpoint(endpoint.id, { tenantId: tenant });
      }
      await store.deleteWebhookEndpoint(foreign.id, { tenantId: otherTenant });
    });

    it('queues nothing when the release fails or names no ended turn', async () => {
      const store = storeOf();
      const tenant = await newTenant();
      const endpoint = await newEndpoint(tenant, ['turn.completed']);
      const tab = await store.createTab({ tenantId: tenant });
      const turnId = randomUUID();
      await store.acquireLease(tab.id, { owner: 'worker-a', turnId, leaseMs: 30_000 });
      expect(
        await store.releaseLease(tab.id, {
          owner: 'worker-b',
          usage,
          ended: { turnId, reason: 'completed' },
        }),
      ).toBe(false);
      expect(await store.releaseLease(tab.id, { owner: 'worker-a', usage })).toBe(true);
      expect(
        await store.listWebhookDeliveries(endpoint.id, { tenantId: tenant, limit: 10 }),
      ).toEqual([]);
      await store.deleteWebhookEndpoint(endpoint.id, { tenantId: tenant });
    });

    /** An endpoint of a new tenant with one delivery queued, and its reads and writes. */
    async function oneQueuedDelivery() {
      const store = storeOf();
      const tenantId = await newTenant();
      const endpoint = await newEndpoint(tenantId);
      await endTurn(tenantId);
      const latest = async () =>
        (await store.listWebhookDeliveries(endpoint.id, { tenantId, limit: 1 }))[0]!;
      const queued = await latest();
      return {
        queued,
        latest,
        /** What a claim of every due delivery got of this one. */
        claim: async (leaseMs: number) =>
          (await store.claimWebhookDeliveries({ limit: 1000, leaseMs })).filter(
            (delivery) => delivery.id === queued.id,
          ),
        record: (attempt: number, result: WebhookAttemptResult) =>
          store.recordWebhookAttempt(queued.id, { attempt, result }),
        remove: () => store.deleteWebhookEndpoint(endpoint.id, { tenantId }),
      };
    }

    it('retries a failed attempt, ignores a stale one, and records the delivery', async () => {
      const delivery = await oneQueuedDelivery();
      const [first] = await delivery.claim(60_000);
      expect(first?.attempt).toBe(1);
      // Claimed: no other dispatcher gets it while the lease lasts.
      expect(await delivery.claim(60_000)).toEqual([]);
      const serverError = {
        delivered: false,
        statusCode: 500,
        error: 'HTTP 500',
        retryInMs: 0,
        maxAgeMs: 3_600_000,
      } as const;
      expect(await delivery.record(1, serverError)).toBe(true);
      const retrying = await delivery.latest();
      expect(retrying).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastStatusCode: 500,
        lastError: 'HTTP 500',
      });
      expect(retrying.nextAttemptAt).not.toBeNull();
      expect(retrying.lastAttemptAt).not.toBeNull();

      // The second attempt's claim lapses (its dispatcher died); a third takes it over.
      const [second] = await delivery.claim(1);
      expect(second?.attempt).toBe(2);
      await sleep(20);
      const [third] = await delivery.claim(60_000);
      expect(third?.attempt).toBe(3);
      expect(await delivery.record(2, { delivered: true, statusCode: 200 })).toBe(false);
      expect(await delivery.record(3, { delivered: true, statusCode: 204 })).toBe(true);
      const delivered = await delivery.latest();
      expect(delivered).toMatchObject({
        status: 'delivered',
        attempts: 3,
        lastStatusCode: 204,
        lastError: null,
        nextAttemptAt: null,
      });
      expect(delivered.deliveredAt).not.toBeNull();
      expect(await delivery.claim(60_000)).toEqual([]);
      // Done: a late result changes nothing.
      expect(await delivery.record(3, serverError)).toBe(false);
      await delivery.remove();
    });

    it('marks a delivery failed once its next retry would pass the maximum age', async () => {
      const delivery = await oneQueuedDelivery();
      const [claimed] = await delivery.claim(60_000);
      const timeout = {
        delivered: false,
        statusCode: null,
        error: 'no answer within 100 ms',
        retryInMs: 60_000,
        maxAgeMs: 30_000,
      } as const;
      expect(await delivery.record(claimed!.attempt, timeout)).toBe(true);
      expect(await delivery.latest()).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastStatusCode: null,
        lastError: 'no answer within 100 ms',
        nextAttemptAt: null,
        deliveredAt: null,
      });
      await delivery.remove();
    });

    it('never hands one delivery to two concurrent claims', async () => {
      const store = storeOf();
      const tenant = await newTenant();
      const endpoint = await newEndpoint(tenant);
      for (let turn = 0; turn < 12; turn++) await endTurn(tenant);
      const mine = new Set(
        (await store.listWebhookDeliveries(endpoint.id, { tenantId: tenant, limit: 100 })).map(
          (delivery) => delivery.id,
        ),
      );
      const claims = await Promise.all(
        Array.from({ length: 6 }, () =>
          store.claimWebhookDeliveries({ limit: 3, leaseMs: 60_000 }),
        ),
      );
      const claimedIds = claims
        .flat()
        .map((delivery) => delivery.id)
        .filter((id) => mine.has(id));
      expect(new Set(claimedIds).size).toBe(claimedIds.length);
      await store.deleteWebhookEndpoint(endpoint.id, { tenantId: tenant });
    });

    it('prunes finished deliveries past their retention, never pending ones', async () => {
      const store = storeOf();
      const pending = await oneQueuedDelivery();
      const finished = await oneQueuedDelivery();
      const [claimed] = await finished.claim(60_000);
      expect(await finished.record(claimed!.attempt, { delivered: true, statusCode: 200 })).toBe(
        true,
      );
      // Within its retention, a finished delivery stays.
      await store.pruneWebhookDeliveries({ olderThanMs: 3_600_000, limit: 1000 });
      expect((await finished.latest()).status).toBe('delivered');
      await sleep(20);
      expect(await store.pruneWebhookDeliveries({ olderThanMs: 1, limit: 1000 })).toBeGreaterThan(
        0,
      );
      expect(await finished.latest()).toBeUndefined();
      expect((await pending.latest()).status).toBe('pending');
      await pending.remove();
      await finished.remove();
    });

    it('deletes pending deliveries with their endpoint', async () => {
      const delivery = await oneQueuedDelivery();
      await delivery.remove();
      expect(await delivery.claim(60_000)).toEqual([]);
    });
  });
}
