import http from 'node:http';
import type { ChunkStore } from '@chunklog/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { everyBackend } from '../testing/test-backends';

const backends = await everyBackend();

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(backends)('GET /v1/tabs/:tabId/events on $name', (backend) => {
  let gateway: GatewayHarness;
  /** While set, the route's tenancy lookup waits for it: the client can leave meanwhile. */
  let holdGetTab: Promise<void> | null = null;
  let getTabCalls = 0;
  let getTabReturns = 0;

  beforeAll(async () => {
    const base = await backend.create();
    // The route's getTab is held open so that the client can go away before the stream starts.
    const store = new Proxy(base.store, {
      get(target, property, receiver) {
        if (property !== 'getTab') return Reflect.get(target, property, receiver);
        return async (...args: Parameters<ChunkStore['getTab']>) => {
          getTabCalls++;
          try {
            if (holdGetTab) await holdGetTab;
            return await target.getTab(...args);
          } finally {
            getTabReturns++;
          }
        };
      },
    });
    gateway = await startGateway(
      backend,
      { store, limits: { reconcileMs: 50 } },
      { ...base, store },
    );
  });
  afterAll(async () => {
    await gateway?.app.close();
    await gateway?.backend.cleanup();
  });

  it('opens no stream for a client that left before the stream started', async () => {
    const tabId = await gateway.createTab();
    let release = () => {};
    holdGetTab = new Promise<void>((resolve) => {
      release = resolve;
    });
    const callsBefore = getTabCalls;
    const client = http.get(`${gateway.baseUrl}/v1/tabs/${tabId}/events`, {
      headers: { authorization: `Bearer ${gateway.tenantA.key}` },
    });
    client.on('error', () => {});
    // The auth plugin may look the tab up too: wait for the route's own lookup to be held.
    await waitFor(() => getTabCalls > callsBefore, 'the tab lookup');
    client.destroy();
    await waitFor(() => client.socket?.destroyed ?? true, 'the client socket to close');
    // Give the server a moment to see the disconnect before the lookup returns.
    await new Promise((resolve) => setTimeout(resolve, 100));
    holdGetTab = null;
    const returnsBefore = getTabReturns;
    release();
    await waitFor(() => getTabReturns > returnsBefore, 'the tab lookup to return');
    // The route goes on in the lookup's continuation: let it run before counting streams.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // A leaked stream stays counted until shutdown.
    await expect
      .poll(() => gateway.app.openStreamCount(), { timeout: 10_000, interval: 10 })
      .toBe(0);
  });

  it('ends the stream of a tab deleted while it streams, with the resume point', async () => {
    const tabId = await gateway.createTab();
    let deletion: Promise<unknown> | null = null;
    const text = new Promise<string>((resolve, reject) => {
      http
        .get(
          `${gateway.baseUrl}/v1/tabs/${tabId}/events`,
          { headers: { authorization: `Bearer ${gateway.tenantA.key}` } },
          (response) => {
            let received = '';
            response.setEncoding('utf8');
            response.on('data', (part) => {
              received += part;
              // The first write (the retry hint) means the stream is live: now delete its tab.
              deletion ??= gateway.request('DELETE', `/v1/tabs/${tabId}`);
            });
            response.on('end', () => resolve(received));
          },
        )
        .on('error', reject);
    });
    expect(await text).toMatch(
      /event: stream-end\ndata: \{"reason":"tab_deleted","after":0\}\n\n$/,
    );
    expect(await deletion).toMatchObject({ status: 204 });
    await expect
      .poll(() => gateway.app.openStreamCount(), { timeout: 10_000, interval: 10 })
      .toBe(0);
  });
});
