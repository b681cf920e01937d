/**
 * What ordinary HTTP clients do that a schema test does not: a JSON client that sets
 * `content-type: application/json` on every request, bodies or not, a URL whose percent
 * escapes do not decode, a resume point kept from somewhere else. Each is answered like any
 * other request: the route's own answer, or a 4xx in the `{ error: { code, message, requestId } }` shape,
 * storing nothing.
 */
import { INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { expectedError } from './testing/expected-error';
import { type GatewayHarness, startGateway } from './testing/gateway-harness';
import { embeddedBackend } from './testing/test-backends';

const json = { 'content-type': 'application/json' };

describe('gateway and common client habits', () => {
  let gateway: GatewayHarness;
  const queued: MessageCommand[] = [];

  beforeAll(async () => {
    gateway = await startGateway(embeddedBackend);
    await gateway.backend.bus.consume(INTAKE_QUEUE, async (item) => {
      queued.push(item.data as MessageCommand);
      await item.ack();
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  describe('an empty body sent as JSON', () => {
    it('is no body on the routes that take none: cancel, stream tickets, delete, create', async () => {
      const tabId = await gateway.createTab();
      const cancel = await gateway.request('POST', `/v1/tabs/${tabId}/cancel`, { headers: json });
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(202);
      const ticket = await gateway.request('POST', `/v1/tabs/${tabId}/stream-tickets`, {
        headers: json,
      });
      expect(ticket.status, JSON.stringify(ticket.body)).toBe(201);
      const created = await gateway.request('POST', '/v1/tabs', { headers: json });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const deleted = await gateway.request('DELETE', `/v1/tabs/${tabId}`, { headers: json });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
      expect((await gateway.request('GET', `/v1/tabs/${tabId}`)).status).toBe(404);
    });

    it('is still a 400 where a body is required, and nothing is queued', async () => {
      const tabId = await gateway.createTab();
      const before = queued.length;
      const response = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        headers: json,
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(expectedError('invalid_input'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(queued.length).toBe(before);
    });

    it('does not make malformed JSON or a prototype key acceptable', async () => {
      for (const rawBody of [' ', '{', '{"__proto__":{"x":1}}']) {
        const response = await gateway.request('POST', '/v1/tabs', { rawBody });
        expect(response.status, JSON.stringify(rawBody)).toBe(400);
        expect(response.body).toEqual(expectedError('invalid_input'));
      }
    });
  });

  describe("a resume point past the tab's last seq", () => {
    // Every seq a client saw was committed before it was sent, so a resume point past the tail
    // is a client's mistake (another tab's seq, a reset DATA_DIR): streaming on would drop
    // every seal up to it without a word.
    it('answers 400 on SSE (header or query) and on the WebSocket, opening no stream', async () => {
      const tabId = await gateway.createTab();
      const headers = { authorization: `Bearer ${gateway.tenantA.key}` };
      const events = `${gateway.baseUrl}/v1/tabs/${tabId}/events`;
      const live = new AbortController();
      const open = await fetch(`${events}?after=0`, { headers, signal: live.signal });
      expect(open.status).toBe(200);
      live.abort();
      for (const init of [
        { url: `${events}?after=1`, headers },
        { url: events, headers: { ...headers, 'last-event-id': '7' } },
      ]) {
        const response = await fetch(init.url, { headers: init.headers });
        expect(response.status, JSON.stringify(init)).toBe(400);
        expect(await response.json()).toEqual(
          expectedError('invalid_input', expect.stringContaining('last seq 0')),
        );
      }
      const status = await new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(
          `${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws?after=3`,
          { headers },
        );
        socket.on('unexpected-response', (_request, response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        socket.on('open', () => {
          socket.close();
          reject(new Error('the WebSocket opened'));
        });
        socket.on('error', () => undefined);
      });
      expect(status).toBe(400);
      await expect
        .poll(() => gateway.app.openStreamCount(), { timeout: 10_000, interval: 10 })
        .toBe(0);
    });
  });

  it('answers a path whose percent escapes do not decode with 400 in the error shape', async () => {
    for (const path of ['/v1/tabs/%E0%A4%A', '/v1/tabs/%', '/v1/tabs/%zz/chunks']) {
      const response = await gateway.request('GET', path);
      expect(response.status, path).toBe(400);
      expect(response.body, path).toEqual(expectedError('invalid_input'));
    }
  });
});
