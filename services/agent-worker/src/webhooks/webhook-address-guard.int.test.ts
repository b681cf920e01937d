/**
 * The worker's guard on webhook deliveries: an endpoint whose address is not public (in its URL,
 * or what its name resolves to when the request is made) is never connected to unless
 * WEBHOOK_ALLOWED_HOSTS opens it, and what the tenant is told names no address or port. Every
 * connection here stays on loopback: a name "resolves" where the test's resolver says.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { parseOutboundAllowlist } from '@chunklog/runtime/outbound-address';
import type { ClaimedWebhookDelivery } from '@chunklog/store';
import { freePort, sleep } from '@chunklog/test-infra';
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedAgent, type ResolveHost } from '../outbound/guarded-agent';
import { type Harness, useHarness } from '../testing/harness';
import { startWebhookReceiver, type WebhookReceiver } from '../testing/webhook-receiver';
import { sendWebhook } from './send-webhook';

const secret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;

/** Resolves `names` as given (each answer in turn, the last one kept), and nothing else. */
function resolverOf(names: Record<string, string[][]>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const asked = new Map<string, number>();
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const answers = names[hostname];
    if (!answers)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const turn = asked.get(hostname) ?? 0;
    asked.set(hostname, turn + 1);
    const answer = answers[Math.min(turn, answers.length - 1)]!;
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

function delivery(url: string): ClaimedWebhookDelivery {
  return {
    id: randomUUID(),
    messageId: `msg_${randomUUID()}`,
    url,
    secret,
    attempt: 1,
    event: {
      type: 'turn.completed',
      timestamp: new Date().toISOString(),
      data: {
        tabId: randomUUID(),
        turnId: randomUUID(),
        reason: 'completed',
        usage: {
          inputTokens: 1,
          outputTokens: 1,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
        },
        lastSeq: 2,
      },
    } as ClaimedWebhookDelivery['event'],
  };
}

describe('sendWebhook through the guarded agent', () => {
  let receiver: WebhookReceiver;
  let port: string;
  const agents: Agent[] = [];
  beforeAll(async () => {
    receiver = await startWebhookReceiver(() => 200);
    port = new URL(receiver.url).port;
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    await receiver.close();
  });

  async function send(url: string, allowed: string[], resolve: ResolveHost) {
    const agent = await createGuardedAgent({
      allowlist: parseOutboundAllowlist(allowed),
      resolve,
    });
    agents.push(agent);
    return sendWebhook(delivery(url), {
      timeoutMs: 5_000,
      now: Date.now,
      signal: new AbortController().signal,
      dispatcher: agent,
    });
  }

  const refusal = {
    delivered: false,
    statusCode: null,
    error: "the endpoint's address is not allowed",
  };

  it('refuses an address in the URL, in any spelling, without connecting', async () => {
    const resolve = resolverOf({});
    for (const host of ['127.0.0.1', '0x7f.0.0.1', '2130706433', '127.1', '[::ffff:127.0.0.1]']) {
      const sent = await send(`http://${host}:${port}/hooks/chunklog`, [], resolve);
      expect(sent, host).toMatchObject(refusal);
    }
    expect(resolve.calls).toEqual([]);
    expect(receiver.received).toEqual([]);
  });

  it('refuses a name that resolves to loopback, or to loopback among public addresses', async () => {
    const resolve = resolverOf({
      'hooks.example.test': [['127.0.0.1']],
      'mixed.example.test': [['93.184.215.14', '127.0.0.1']],
      'mapped.example.test': [['::ffff:127.0.0.1']],
      localhost: [['127.0.0.1', '::1']],
    });
    for (const host of [
      'hooks.example.test',
      'mixed.example.test',
      'mapped.example.test',
      'localhost',
    ]) {
      const sent = await send(`http://${host}:${port}/hooks/chunklog`, [], resolve);
      expect(sent, host).toMatchObject(refusal);
      expect(JSON.stringify(sent)).not.toContain(port);
    }
    expect(receiver.received).toEqual([]);
  });

  it('checks the address of every connection: a name that rebinds to loopback is refused then', async () => {
    // The first answer stands for a public address: 127.0.0.2, opened by the allowlist, where a
    // second receiver listens on the same port (so no connection leaves the machine).
    const first = createServer((_request, response) =>
      response.writeHead(204, { connection: 'close' }).end(),
    );
    await new Promise<void>((resolve) => first.listen(Number(port), '127.0.0.2', resolve));
    try {
      const resolve = resolverOf({ 'rebind.example.test': [['127.0.0.2'], ['127.0.0.1']] });
      const agent = await createGuardedAgent({
        allowlist: parseOutboundAllowlist(['127.0.0.2/32']),
        resolve,
      });
      agents.push(agent);
      const options = {
        timeoutMs: 5_000,
        now: Date.now,
        signal: new AbortController().signal,
        dispatcher: agent,
      };
      const url = `http://rebind.example.test:${port}/hooks/chunklog`;
      expect(await sendWebhook(delivery(url), options)).toEqual({
        delivered: true,
        statusCode: 204,
      });
      const again = await sendWebhook(delivery(url), options);
      expect(again).toMatchObject(refusal);
      expect(resolve.calls).toEqual(['rebind.example.test', 'rebind.example.test']);
      expect(receiver.received).toEqual([]);
    } finally {
      await closeServer(first);
    }
  });

  it('tells a refused connection by its kind, never by its address or port', async () => {
    const closed = String(await freePort());
    const resolve = resolverOf({ 'closed.example.test': [['127.0.0.1']] });
    for (const url of [`http://127.0.0.1:${closed}/`, `http://closed.example.test:${closed}/`]) {
      const sent = await send(url, ['127.0.0.1/32'], resolve);
      expect(sent).toMatchObject({
        delivered: false,
        statusCode: null,
        error: 'connection refused',
      });
      expect(sent.delivered === false && sent.error).not.toMatch(/127\.0\.0\.1|\d{4,5}/);
      // The operator's log line has it all.
      expect(sent.delivered === false && sent.detail).toContain(`127.0.0.1:${closed}`);
    }
    const unknown = await send(`http://nowhere.example.test:${closed}/`, [], resolve);
    expect(unknown).toMatchObject({ error: 'host name not found' });
  });

  it('delivers to what WEBHOOK_ALLOWED_HOSTS opens: a network, or a host by name', async () => {
    const resolve = resolverOf({ 'hooks.example.test': [['127.0.0.1']] });
    const byName = `http://hooks.example.test:${port}/hooks/chunklog`;
    expect(await send(byName, ['127.0.0.1/32'], resolve)).toEqual({
      delivered: true,
      statusCode: 200,
    });
    expect(await send(byName, ['hooks.example.test'], resolve)).toEqual({
      delivered: true,
      statusCode: 200,
    });
    expect(await send(receiver.url, ['127.0.0.0/8'], resolve)).toEqual({
      delivered: true,
      statusCode: 200,
    });
    expect(receiver.received).toHaveLength(3);
  });
});

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('deliveries to a refused address, as the tenant lists them', () => {
  const getHarness = useHarness();
  const quickRetries = {
    pollMs: 50,
    attemptTimeoutMs: 2_000,
    backoff: { baseMs: 20, maxMs: 100 },
    maxAgeMs: 60_000,
    retentionMs: 86_400_000,
  };

  async function endpointFor(h: Harness, url: string) {
    const { endpoint } = await h.store.createWebhookEndpoint({
      tenantId: h.tenantId,
      url,
      eventTypes: ['turn.completed'],
      secret,
    });
    return endpoint;
  }

  async function attempted(h: Harness, endpointId: string, attempts: number) {
    for (let poll = 0; poll < 200; poll++) {
      const [latest] = await h.store.listWebhookDeliveries(endpointId, {
        tenantId: h.tenantId,
        limit: 1,
      });
      if (latest && (latest.attempts >= attempts || latest.status !== 'pending')) return latest;
      await sleep(50);
    }
    throw new Error(`no delivery of ${endpointId} was attempted ${attempts} times`);
  }

  it('never reaches a loopback receiver behind a name, and shows no address; the allowlist opens it', async (context) => {
    const h = getHarness(context);
    const receiver = await startWebhookReceiver(() => 200);
    h.onClose(() => void receiver.close());
    const { port } = new URL(receiver.url);
    const closedPort = String(await freePort());
    const resolveHost = resolverOf({ 'hooks.example.test': [['127.0.0.1']] });
    const named = await endpointFor(h, `http://hooks.example.test:${port}/hooks/chunklog`);
    const closed = await endpointFor(h, `http://127.0.0.1:${closedPort}/`);
    const guarded = await h.startWorker({ webhooks: quickRetries, resolveHost });
    const tab = await h.newTab();
    await h.send(tab.id, 'A few words [[sim: words 4]]');

    for (const [endpoint, hidden] of [
      [named, port],
      [closed, closedPort],
    ] as const) {
      const listed = await attempted(h, endpoint.id, 2);
      expect(listed).toMatchObject({
        status: 'pending',
        lastStatusCode: null,
        lastError: "the endpoint's address is not allowed",
      });
      expect(JSON.stringify(listed)).not.toContain('127.0.0.1');
      expect(listed.lastError).not.toContain(hidden);
    }
    expect(receiver.received).toEqual([]);
    await guarded.stop();
    const [stopped] = await h.store.listWebhookDeliveries(closed.id, {
      tenantId: h.tenantId,
      limit: 1,
    });

    // The operator opens loopback: the next attempt is delivered, and a closed port is only
    // "connection refused".
    const opened = await h.startWorker({
      webhooks: { ...quickRetries, allowedHosts: ['127.0.0.1/32'] },
      resolveHost,
    });
    await receiver.request(1);
    expect(await attempted(h, named.id, 99)).toMatchObject({
      status: 'delivered',
      lastStatusCode: 200,
    });
    // An attempt the guarded worker claimed before it stopped may still record its refusal
    // after `stopped` was read: wait for the first attempt made under the allowlist.
    let refusedPort = await attempted(h, closed.id, stopped!.attempts + 1);
    for (let poll = 0; poll < 5 && refusedPort.lastError !== 'connection refused'; poll++) {
      refusedPort = await attempted(h, closed.id, refusedPort.attempts + 1);
    }
    expect(refusedPort.lastError).toBe('connection refused');
    await opened.stop();
  });
});
