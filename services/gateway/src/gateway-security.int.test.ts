import http from 'node:http';
import os from 'node:os';
import type { ChunkStore } from '@chunklog/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from './create-gateway';
import { apiRouteCalls, tabRouteCalls } from './testing/api-routes';
import { expectedError } from './testing/expected-error';
import { type GatewayHarness, startGateway } from './testing/gateway-harness';
import { openEventSource, openWebSocket } from './testing/stream-clients';
import { everyBackend } from './testing/test-backends';
import { TurnDriver } from './testing/turn-driver';

const backends = await everyBackend();

describe.each(backends)('gateway security on $name', (backend) => {
  let gateway: GatewayHarness;
  let now = Date.now();
  let tabId: string;

  beforeAll(async () => {
    gateway = await startGateway(backend, { clock: () => now });
    tabId = await gateway.createTab();
    const driver = new TurnDriver(gateway.backend.store, gateway.backend.bus, tabId);
    await driver.startTurn();
    await driver.sealUserText('secret of tenant A');
    await driver.endTurn();
    await driver.close();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('answers 401 without a key, with a wrong key and with a malformed header', async () => {
    for (const route of apiRouteCalls(tabId)) {
      const attempts: Record<string, string>[] = [
        {},
        { authorization: 'Bearer wrong-key' },
        { authorization: gateway.tenantA.key },
      ];
      for (const headers of attempts) {
        const response = await gateway.request(route.method, route.path, {
          key: null,
          headers,
          body: route.body,
        });
        expect(response.status, `${route.method} ${route.path}`).toBe(401);
        expect(response.body).toEqual(expectedError('unauthorized'));
      }
    }
    await expect(
      openWebSocket(`${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`),
    ).rejects.toThrow(/401/);
    const page = await gateway.request('GET', `/v1/tabs/${tabId}/chunks`);
    expect((page.body as { total: number }).total).toBe(1);
  });

  it("answers 404 for another tenant's tab on every route, stream and ticket, changing nothing", async () => {
    for (const route of tabRouteCalls(tabId)) {
      const response = await gateway.request(route.method, route.path, {
        key: gateway.tenantB.key,
        body: route.body,
      });
      expect(response.status, `${route.method} ${route.path}`).toBe(404);
      expect(response.body).toEqual(expectedError('not_found'));
    }
    await expect(
      openWebSocket(`${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`, {
        authorization: `Bearer ${gateway.tenantB.key}`,
      }),
    ).rejects.toThrow(/404/);
    const tab = await gateway.request('GET', `/v1/tabs/${tabId}`);
    expect(tab.status).toBe(200);
    const page = await gateway.request('GET', `/v1/tabs/${tabId}/chunks`);
    expect((page.body as { total: number }).total).toBe(1);
  });

  it('opens streams with a ticket for that tab only, and refuses forged, foreign and expired ones', async () => {
    const otherTabId = await gateway.createTab();
    const issued = await gateway.request('POST', `/v1/tabs/${tabId}/stream-tickets`);
    expect(issued.status).toBe(201);
    const { ticket, expiresAt } = issued.body as { ticket: string; expiresAt: number };
    expect(expiresAt).toBeGreaterThan(now);
    const withTicket = (id: string, value: string) =>
      `${gateway.baseUrl}/v1/tabs/${id}/events?ticket=${encodeURIComponent(value)}`;

    const source = openEventSource(withTicket(tabId, ticket));
    const seal = await source.waitFor((event) => event.event === 'chunk-seal');
    expect(seal.id).toBe('1');
    source.close();
    const socket = await openWebSocket(
      `${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws?ticket=${encodeURIComponent(ticket)}`,
    );
    await socket.waitFor((event) => event.event === 'chunk-seal');
    socket.close();

    const forged = `${ticket.split('.')[0]}.${'A'.repeat(43)}`;
    for (const [id, value] of [
      [otherTabId, ticket],
      [tabId, forged],
      [tabId, 'garbage'],
    ] as const) {
      const response = await fetch(withTicket(id, value));
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(expectedError('unauthorized'));
    }
    // A ticket opens streams, nothing else.
    const rest = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?ticket=${ticket}`, {
      key: null,
    });
    expect(rest.status).toBe(401);
    now += 61_000;
    const expired = await fetch(withTicket(tabId, ticket));
    expect(expired.status).toBe(401);
    now = Date.now();
  });

  it('answers 400 for a bad resume point and 426 for a plain GET of the WebSocket route', async () => {
    const headers = { authorization: `Bearer ${gateway.tenantA.key}` };
    for (const [query, extra] of [
      ['?after=-1', {}],
      ['?after=x', {}],
      ['', { 'last-event-id': 'abc' }],
    ] as const) {
      const response = await fetch(`${gateway.baseUrl}/v1/tabs/${tabId}/events${query}`, {
        headers: { ...headers, ...extra },
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(expectedError('invalid_input'));
    }
    const plain = await gateway.request('GET', `/v1/tabs/${tabId}/ws`);
    expect(plain.status).toBe(426);
    expect(plain.body).toEqual(expectedError('upgrade_required'));
  });

  it('rate-limits per key, not per address', async () => {
    const limited = await startGateway(
      backend,
      { limits: { requestsPerMinute: 5 } },
      gateway.backend,
    );
    try {
      for (let index = 0; index < 5; index++) {
        expect((await limited.request('GET', '/v1/tabs')).status).toBe(200);
      }
      const refused = await limited.request('GET', '/v1/tabs');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(expectedError('rate_limited'));
      const otherKey = await limited.request('GET', '/v1/tabs', { key: limited.tenantB.key });
      expect(otherKey.status).toBe(200);
      expect((await limited.request('GET', '/healthz', { key: null })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("answers an address's failed authentications 429 past the limit, and still serves its valid keys", async () => {
    const guarded = await startGateway(
      backend,
      { limits: { failedAuthPerMinute: 3 } },
      gateway.backend,
    );
    try {
      for (let index = 0; index < 3; index++) {
        expect((await guarded.request('GET', '/v1/tabs', { key: `guess-${index}` })).status).toBe(
          401,
        );
      }
      const refused = await guarded.request('GET', '/v1/tabs', { key: 'guess-4' });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(expectedError('rate_limited'));
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // The same address (one proxy, one NAT) with a valid key: checked first, so served.
      for (const tenant of [guarded.tenantA, guarded.tenantB]) {
        expect((await guarded.request('GET', '/v1/tabs', { key: tenant.key })).status).toBe(200);
      }
      expect((await guarded.request('GET', '/v1/tabs', { key: 'guess-5' })).status).toBe(429);
    } finally {
      await guarded.close();
    }
  });

  it('hides the details of internal errors', async () => {
    const failing: ChunkStore = new Proxy(gateway.backend.store, {
      get(target, property, receiver) {
        if (property === 'listTabs') {
          return async () => {
            throw new Error('connection to 10.0.0.7 refused: password=hunter2');
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    const broken = await startGateway(backend, { store: failing }, gateway.backend);
    try {
      const response = await broken.request('GET', '/v1/tabs');
      expect(response.status).toBe(500);
      expect(response.body).toEqual(expectedError('internal', 'internal error'));
    } finally {
      await broken.close();
    }
  });

  it('lets in-flight requests finish when closing, and refuses new ones', async () => {
    let release: (() => void) | undefined;
    const slow: ChunkStore = new Proxy(gateway.backend.store, {
      get(target, property, receiver) {
        if (property === 'listTabs') {
          return async (...args: Parameters<ChunkStore['listTabs']>) => {
            await new Promise<void>((resolve) => {
              release = resolve;
            });
            return target.listTabs(...args);
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    const closing = await startGateway(backend, { store: slow }, gateway.backend);
    const inFlight = closing.request('GET', '/v1/tabs');
    // Up to 10 s for the request to reach the store: a loaded machine may take more than 1 s.
    for (let attempt = 0; attempt < 1_000 && !release; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(release, 'the request reached the store').toBeDefined();
    let closed = false;
    const closeDone = closing.app.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    release?.();
    const response = await inFlight;
    expect(response.status).toBe(200);
    await closeDone;
    await expect(fetch(`${closing.baseUrl}/healthz`)).rejects.toThrow();
  });

  it('with auth off and storeReady given, boots at once and asks the store for the local tenant only once it settles', async () => {
    const store = gateway.backend.store;
    const asked: string[] = [];
    const watched: ChunkStore = {
      ...store,
      createTenant: (input) => {
        asked.push(input.name);
        return store.createTenant(input);
      },
    };
    let storeIsReady: () => void = () => {};
    const storeReady = new Promise<void>((resolve) => {
      storeIsReady = resolve;
    });
    const early = await createGateway({
      store: watched,
      bus: gateway.backend.bus,
      auth: { mode: 'off' },
      ticketSecret: 'test-ticket-secret-0123456789',
      storeReady,
    });
    try {
      let ready = false;
      const booting = Promise.resolve(early.ready()).then(() => {
        ready = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(asked).toEqual([]);
      expect(ready).toBe(false);
      storeIsReady();
      await booting;
      expect(asked).toEqual(['local']);
    } finally {
      await early.close();
    }
  });

  it('with auth off, serves loopback clients as the local tenant and refuses other interfaces', async () => {
    const open = await startGateway(backend, { auth: { mode: 'off' } }, gateway.backend);
    try {
      const created = await open.request('POST', '/v1/tabs', {
        key: null,
        body: { title: 'local' },
      });
      expect(created.status).toBe(201);
      const listed = await open.request('GET', '/v1/tabs', { key: null });
      expect((listed.body as { tabs: { title: string }[] }).tabs.map((tab) => tab.title)).toEqual([
        'local',
      ]);
      // Tenant A's tab stays invisible to the local tenant.
      expect((await open.request('GET', `/v1/tabs/${tabId}`, { key: null })).status).toBe(404);
    } finally {
      await open.close();
    }
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
    if (!external) return;
    const gatewayOnAll = await createGateway({
      store: gateway.backend.store,
      bus: gateway.backend.bus,
      auth: { mode: 'off' },
      ticketSecret: 'test-ticket-secret-0123456789',
    });
    await gatewayOnAll.listen({ host: '0.0.0.0', port: 0 });
    try {
      const port = (gatewayOnAll.server.address() as { port: number }).port;
      // Reached by that address, the Host is not a loopback name: refused before anything else.
      const response = await fetch(`http://${external}:${port}/v1/tabs`);
      expect(response.status).toBe(403);
      // With a loopback Host, the socket's own address still refuses the other interface.
      const spoofed = await new Promise<number>((resolve, reject) => {
        http
          .get(
            { host: external, port, path: '/v1/tabs', headers: { host: '127.0.0.1' } },
            (answer) => {
              answer.resume();
              resolve(answer.statusCode ?? 0);
            },
          )
          .on('error', reject);
      });
      expect(spoofed).toBe(401);
    } finally {
      await gatewayOnAll.close();
    }
  });
});
