/**
 * At least once across a crash or a stop: the worker that ended a turn dies, or stops, in the
 * middle of the delivery, and another dispatcher delivers the event the turn's end put in the
 * outbox.
 */
import { randomUUID } from 'node:crypto';
import { sleep } from '@chunklog/test-infra';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { type Harness, startWorkerProcess, useHarness } from '../testing/harness';
import { startWebhookReceiver } from '../testing/webhook-receiver';

const getHarness = useHarness();
const secret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
const quickRetries = {
  pollMs: 50,
  attemptTimeoutMs: 1_500,
  backoff: { baseMs: 20, maxMs: 100 },
  maxAgeMs: 60_000,
  retentionMs: 86_400_000,
  // The receivers listen on loopback, which only an allowlist opens.
  allowedHosts: ['127.0.0.1/32'],
};

/** An endpoint whose receiver never answers its first request and answers 200 after that. */
async function hangingOnceEndpoint(h: Harness) {
  const receiver = await startWebhookReceiver((count) =>
    count === 1 ? new Promise<number>(() => {}) : 200,
  );
  h.onClose(() => void receiver.close());
  const { endpoint } = await h.store.createWebhookEndpoint({
    tenantId: h.tenantId,
    url: receiver.url,
    eventTypes: ['turn.completed'],
    secret,
  });
  return { receiver, endpoint };
}

/** The endpoint's latest delivery once it is no longer pending (or after 5 s of polling). */
async function settledDelivery(h: Harness, endpointId: string) {
  const latest = async () =>
    (await h.store.listWebhookDeliveries(endpointId, { tenantId: h.tenantId, limit: 1 }))[0];
  let delivery = await latest();
  for (let poll = 0; delivery?.status === 'pending' && poll < 100; poll++) {
    await sleep(50);
    delivery = await latest();
  }
  return delivery;
}

describe('webhook delivery across a crash or a stop', () => {
  it('is made by another dispatcher after the one that claimed it is killed mid-attempt', async (context) => {
    const h = getHarness(context);
    const { receiver, endpoint } = await hangingOnceEndpoint(h);
    const { worker } = await startWorkerProcess(
      h,
      {
        WORKER_ID: `webhook-crash-${randomUUID().slice(0, 8)}`,
        // A claim lasts twice the attempt timeout: the second dispatcher waits at most that.
        WEBHOOK_ATTEMPT_TIMEOUT_MS: '1500',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1/32',
      },
      /agent worker ready/,
    );
    const tab = await h.newTab();
    await h.send(tab.id, 'Say a few words [[sim: words 6]]');

    const first = await receiver.request(1);
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await exited;
    const ended = await h.store.getTab(tab.id);
    expect(ended.status).toBe('idle');
    const [claimed] = await h.store.listWebhookDeliveries(endpoint.id, {
      tenantId: h.tenantId,
      limit: 10,
    });
    expect(claimed).toMatchObject({ status: 'pending', attempts: 1, deliveredAt: null });

    const rescuer = await h.startWorker({ webhooks: quickRetries });
    const second = await receiver.request(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    const event = new Webhook(secret).verify(second.body, second.headers as Record<string, string>);
    expect(event).toMatchObject({
      type: 'turn.completed',
      data: { tabId: tab.id, turnId: claimed!.turnId, reason: 'completed', lastSeq: ended.lastSeq },
    });
    const delivery = await settledDelivery(h, endpoint.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 });
    expect(receiver.received).toHaveLength(2);
    // The next case needs its own workers to be the only dispatchers.
    await rescuer.stop();
  });

  it('is abandoned by a stopping worker, without waiting out the attempt, and retried by another', async (context) => {
    const h = getHarness(context);
    const { receiver, endpoint } = await hangingOnceEndpoint(h);
    // Longer than the test may run: only the stop can end this attempt.
    const stopping = await h.startWorker({
      webhooks: { ...quickRetries, attemptTimeoutMs: 300_000 },
    });
    const tab = await h.newTab();
    await h.send(tab.id, 'A few words [[sim: words 4]]');
    await receiver.request(1);
    await stopping.stop();
    const [abandoned] = await h.store.listWebhookDeliveries(endpoint.id, {
      tenantId: h.tenantId,
      limit: 1,
    });
    expect(abandoned).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: null,
      lastError: 'abandoned: the dispatcher stopped',
    });

    const rescuer = await h.startWorker({ webhooks: quickRetries });
    const second = await receiver.request(2);
    expect(second.headers['webhook-id']).toBe(abandoned!.messageId);
    const delivery = await settledDelivery(h, endpoint.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
    await rescuer.stop();
  });
});
