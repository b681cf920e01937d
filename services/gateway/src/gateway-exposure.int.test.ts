import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from './testing/captured-log';
import { expectedError } from './testing/expected-error';
import { type GatewayHarness, startGateway } from './testing/gateway-harness';
import { openEventSource, openWebSocket, type RecordingClient } from './testing/stream-clients';
import { embeddedBackend } from './testing/test-backends';

interface RawAnswer {
  status: number;
  body: unknown;
  headers: http.IncomingHttpHeaders;
}

/**
 * One request with exactly these headers (fetch would not send `Host` as given, nor leave out
 * what it adds by itself), and the body as raw bytes.
 */
function rawRequest(
  baseUrl: string,
  input: { method: string; path: string; headers?: Record<string, string>; body?: Buffer },
): Promise<RawAnswer> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: input.method, path: input.path, headers: input.headers },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const text = Buffer.concat(parts).toString();
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers });
        });
      },
    );
    request.on('error', reject);
    request.end(input.body);
  });
}

const forbidden = expect.objectContaining({
  error: expect.objectContaining({ code: 'forbidden' }),
});

describe('a local gateway with auth off, against web pages', () => {
  let gateway: GatewayHarness;
  let withCors: GatewayHarness;

  beforeAll(async () => {
    gateway = await startGateway(embeddedBackend, { auth: { mode: 'off' } });
    withCors = await startGateway(
      embeddedBackend,
      { auth: { mode: 'off' }, cors: { origins: ['http://localhost:5173'] } },
      gateway.backend,
    );
  });
  afterAll(async () => {
    await withCors?.close();
    await gateway?.close();
  });

  async function tabCount(): Promise<number> {
    const list = await rawRequest(gateway.baseUrl, {
      method: 'GET',
      path: '/v1/tabs?limit=100',
      headers: { host: '127.0.0.1' },
    });
    return (list.body as { tabs: unknown[] }).tabs.length;
  }

  it('refuses a Host that is not a loopback name (DNS rebinding), reads included', async () => {
    const before = await tabCount();
    for (const host of [
      'evil.example.test',
      'evil.example.test:8787',
      '10.0.0.5',
      'localhost.evil.test',
    ]) {
      for (const method of ['POST', 'GET']) {
        const answer = await rawRequest(gateway.baseUrl, {
          method,
          path: '/v1/tabs',
          headers: { host, 'content-type': 'application/json' },
          body: method === 'POST' ? Buffer.from('{"title":"rebound"}') : undefined,
        });
        expect(answer.status, `${method} with Host ${host}`).toBe(403);
        expect(answer.body).toEqual(forbidden);
      }
    }
    expect(await tabCount()).toBe(before);
  });

  it('serves loopback Host names: localhost, 127.0.0.1, [::1], with or without a port', async () => {
    const { port } = new URL(gateway.baseUrl);
    for (const host of [
      'localhost',
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      '[::1]',
      'app.localhost',
    ]) {
      const answer = await rawRequest(gateway.baseUrl, {
        method: 'GET',
        path: '/v1/tabs',
        headers: { host },
      });
      expect(answer.status, host).toBe(200);
    }
  });

  it('refuses a cross-site state change: a foreign Origin, or Sec-Fetch-Site cross-site', async () => {
    const before = await tabCount();
    const attempts: Record<string, string>[] = [
      { origin: 'https://evil.example.test' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'http://localhost:5173' },
    ];
    for (const headers of attempts) {
      const answer = await rawRequest(gateway.baseUrl, {
        method: 'POST',
        path: '/v1/tabs',
        headers: { host: '127.0.0.1', ...headers },
      });
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(answer.body).toEqual(forbidden);
    }
    expect(await tabCount()).toBe(before);
  });

  it('refuses a WebSocket opened from another site', async () => {
    const tabId = await gateway.createTab();
    const wsUrl = `${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`;
    await expect(openWebSocket(wsUrl, { origin: 'https://evil.example.test' })).rejects.toThrow(
      /403/,
    );
    const own = await openWebSocket(wsUrl, { origin: gateway.baseUrl });
    own.close();
  });

  it('lets in the app itself, clients without an Origin, and origins CORS_ORIGINS lists', async () => {
    const { host } = new URL(gateway.baseUrl);
    const sameOrigin = await rawRequest(gateway.baseUrl, {
      method: 'POST',
      path: '/v1/tabs',
      headers: { host, origin: gateway.baseUrl, 'sec-fetch-site': 'same-origin' },
    });
    expect(sameOrigin.status).toBe(201);
    const curl = await rawRequest(gateway.baseUrl, {
      method: 'POST',
      path: '/v1/tabs',
      headers: { host },
    });
    expect(curl.status).toBe(201);
    const listed = await rawRequest(withCors.baseUrl, {
      method: 'POST',
      path: '/v1/tabs',
      headers: {
        host: new URL(withCors.baseUrl).host,
        origin: 'http://localhost:5173',
        'sec-fetch-site': 'same-site',
      },
    });
    expect(listed.status).toBe(201);
  });
});

describe('gateway limits and hygiene', () => {
  let gateway: GatewayHarness;
  const log = capturedLog();

  beforeAll(async () => {
    gateway = await startGateway(embeddedBackend, {
      logger: log.logger,
      limits: { streamsPerKey: 3, streamsPerTenant: 5 },
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('caps the streams one key holds open, then the tenant, with a 429 and Retry-After', async () => {
    const tabId = await gateway.createTab();
    const url = `${gateway.baseUrl}/v1/tabs/${tabId}/events`;
    const auth = { authorization: `Bearer ${gateway.tenantA.key}` };
    const wsUrl = url.replace('http', 'ws').replace('/events', '/ws');
    const sources = [openEventSource(url, auth), openEventSource(url, auth)];
    await Promise.all(sources.map((client) => client.opened));
    const open: RecordingClient[] = [...sources, await openWebSocket(wsUrl, auth)];

    const refused = await fetch(url, { headers: auth });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toEqual(expectedError('rate_limited'));
    await expect(openWebSocket(wsUrl, auth)).rejects.toThrow(/429/);

    // Stream tickets are the tenant's: they count against the tenant's cap of 5, not the key's.
    const tickets = [];
    for (let index = 0; index < 3; index += 1) {
      const ticket = await gateway.request('POST', `/v1/tabs/${tabId}/stream-tickets`);
      tickets.push((ticket.body as { ticket: string }).ticket);
    }
    const byTicket = [
      openEventSource(`${url}?ticket=${tickets[0]}`),
      openEventSource(`${url}?ticket=${tickets[1]}`),
    ];
    await Promise.all(byTicket.map((client) => client.opened));
    const overTenant = await fetch(`${url}?ticket=${tickets[2]}`);
    expect(overTenant.status).toBe(429);
    await overTenant.body?.cancel();

    // Another tenant is not affected.
    const otherTab = await gateway.createTab(gateway.tenantB);
    const other = await fetch(`${gateway.baseUrl}/v1/tabs/${otherTab}/events`, {
      headers: { authorization: `Bearer ${gateway.tenantB.key}` },
    });
    expect(other.status).toBe(200);
    await other.body?.cancel();

    // A closed stream gives its slot back.
    open[0]?.close();
    await expect
      .poll(async () => {
        const again = await fetch(url, { headers: auth, signal: AbortSignal.timeout(2_000) });
        await again.body?.cancel();
        return again.status;
      })
      .toBe(200);
    for (const client of [...open, ...byTicket]) client.close();
  });

  it('caps the tabs of a tenant at its limit with a 409, and lets it create again after a delete', async () => {
    const capped = await startGateway(
      embeddedBackend,
      { limits: { tabsPerTenant: 3 } },
      gateway.backend,
    );
    try {
      // A tenant of its own, with no tabs yet.
      const { store } = gateway.backend;
      const tenant = await store.createTenant({ name: `capped-${crypto.randomUUID()}` });
      const key = `ck_capped_${crypto.randomUUID()}`;
      await store.addApiKey(tenant.id, key);
      const made: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        made.push(await capped.createTab({ id: tenant.id, key }));
      }
      const refused = await capped.request('POST', '/v1/tabs', { key, body: {} });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual(expectedError('conflict'));
      const listed = await capped.request('GET', '/v1/tabs', { key });
      expect((listed.body as { tabs: unknown[] }).tabs).toHaveLength(3);
      // Another tenant is not held back by this one's tabs.
      const other = await store.createTenant({ name: `uncapped-${crypto.randomUUID()}` });
      const otherKey = `ck_uncapped_${crypto.randomUUID()}`;
      await store.addApiKey(other.id, otherKey);
      expect((await capped.request('POST', '/v1/tabs', { key: otherKey, body: {} })).status).toBe(
        201,
      );
      const deleted = await capped.request('DELETE', `/v1/tabs/${made[0]}`, { key });
      expect(deleted.status).toBe(204);
      expect((await capped.request('POST', '/v1/tabs', { key, body: {} })).status).toBe(201);
    } finally {
      await capped.close();
    }
  });

  it('never logs a stream ticket or a key put in the query', async () => {
    const tabId = ((await gateway.request('GET', '/v1/tabs')).body as { tabs: { id: string }[] })
      .tabs[0]?.id;
    const ticket = (
      (await gateway.request('POST', `/v1/tabs/${tabId}/stream-tickets`)).body as {
        ticket: string;
      }
    ).ticket;
    const stream = await fetch(`${gateway.baseUrl}/v1/tabs/${tabId}/events?ticket=${ticket}`);
    await stream.body?.cancel();
    await gateway.request('GET', `/v1/tabs?api_key=${gateway.tenantA.key}`);
    await gateway.request('GET', `/v1/nowhere?token=${gateway.tenantA.key}`);
    const lines = log.lines.map((line) => JSON.stringify(line));
    expect(lines.some((line) => line.includes('ticket=[redacted]'))).toBe(true);
    expect(lines.some((line) => line.includes('api_key=[redacted]'))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain(ticket);
      expect(line).not.toContain(gateway.tenantA.key);
    }
  });

  it('refuses a body that is not UTF-8 with 400, storing nothing', async () => {
    const tabId = await gateway.createTab(gateway.tenantA);
    const body = Buffer.concat([
      Buffer.from('{"text":"caf'),
      Buffer.from([0xe9, 0xff]),
      Buffer.from('"}'),
    ]);
    const answer = await rawRequest(gateway.baseUrl, {
      method: 'POST',
      path: `/v1/tabs/${tabId}/messages`,
      headers: {
        authorization: `Bearer ${gateway.tenantA.key}`,
        'content-type': 'application/json',
      },
      body,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(expectedError('invalid_input'));
    expect(JSON.stringify(answer.body)).toMatch(/UTF-8/);
    const chunks = await gateway.request('GET', `/v1/tabs/${tabId}/chunks`);
    expect((chunks.body as { total: number }).total).toBe(0);
  });

  it('refuses lone surrogates in text and title with 400 naming the field, storing nothing', async () => {
    const tabId = await gateway.createTab(gateway.tenantA);
    const message = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
      rawBody: '{"text":"a\\ud800b"}',
    });
    expect(message.status).toBe(400);
    expect(JSON.stringify(message.body)).toContain('/text');
    const rename = await gateway.request('PATCH', `/v1/tabs/${tabId}`, {
      rawBody: '{"title":"x\\udc00"}',
    });
    expect(rename.status).toBe(400);
    expect(JSON.stringify(rename.body)).toContain('/title');
    const tab = await gateway.request('GET', `/v1/tabs/${tabId}`);
    expect((tab.body as { tab: { title: string; lastSeq: number } }).tab).toMatchObject({
      title: 'test',
      lastSeq: 0,
    });
    // A surrogate pair is one character, and is kept.
    const emoji = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
      rawBody: '{"text":"\\ud83d\\ude00 ok"}',
    });
    expect(emoji.status).toBe(202);
  });

  it('answers 413 to an oversized body every time, never a reset connection', async () => {
    const tabId = await gateway.createTab(gateway.tenantA);
    const body = JSON.stringify({ text: 'x'.repeat(10_000_000) });
    const statuses = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${gateway.baseUrl}/v1/tabs/${tabId}/messages`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${gateway.tenantA.key}`,
            'content-type': 'application/json',
          },
          body,
        }).then(
          async (response) => {
            await response.body?.cancel();
            return response.status;
          },
          (error: Error) => `${error.message}: ${(error.cause as Error | undefined)?.message}`,
        ),
      ),
    );
    expect(statuses).toEqual(Array(8).fill(413));
  });

  it('reads a slow oversized body to its end, so its client sees the 413 and no write fails', async () => {
    const tabId = await gateway.createTab(gateway.tenantA);
    const { port } = new URL(gateway.baseUrl);
    const piece = Buffer.alloc(64 * 1024, 'x');
    const pieces = 40; // 2.5 MB against the 1 MB limit
    const outcome = await new Promise<{ status: number; failedWrites: number; sent: number }>(
      (resolve) => {
        let status = 0;
        let failedWrites = 0;
        let sent = 0;
        const request = http.request({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/v1/tabs/${tabId}/messages`,
          headers: {
            authorization: `Bearer ${gateway.tenantA.key}`,
            'content-type': 'application/json',
            'content-length': String(piece.length * pieces),
          },
        });
        request.on('response', (response) => {
          status = response.statusCode ?? 0;
          response.resume();
        });
        request.on('error', () => {});
        const sendNext = () => {
          if (sent === pieces) {
            request.end(() => resolve({ status, failedWrites, sent }));
            return;
          }
          sent += 1;
          request.write(piece, (error) => {
            if (error) failedWrites += 1;
            setTimeout(sendNext, 5);
          });
        };
        sendNext();
      },
    );
    expect(outcome).toEqual({ status: 413, failedWrites: 0, sent: pieces });
  });
});
