import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayHarness, type JsonResponse, startGateway } from '../testing/gateway-harness';
import { embeddedBackend } from '../testing/test-backends';

const allowedOrigin = 'https://chat.example.com';
const otherOrigin = 'https://evil.example.net';

/** The CORS headers of a response (every `access-control-*` one), by lower-case name. */
function corsHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));
}

function listed(value: string | null): string[] {
  return (value ?? '').split(',').map((item) => item.trim().toLowerCase());
}

describe('CORS', () => {
  let gateway: GatewayHarness;
  let anyOrigin: GatewayHarness;
  let noCors: GatewayHarness;
  let tabId: string;

  beforeAll(async () => {
    gateway = await startGateway(embeddedBackend, { cors: { origins: [allowedOrigin] } });
    anyOrigin = await startGateway(embeddedBackend, { cors: { origins: ['*'] } }, gateway.backend);
    noCors = await startGateway(embeddedBackend, {}, gateway.backend);
    tabId = await gateway.createTab();
  });
  afterAll(async () => {
    await noCors?.close();
    await anyOrigin?.close();
    await gateway?.close();
  });

  /** The response has `status` and lets a browser at `origin` read it. */
  function expectAllowedFor(response: JsonResponse, status: number, origin: string) {
    expect(response.status).toBe(status);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin);
  }

  function preflight(harness: GatewayHarness, path: string, origin: string, headers: string) {
    return harness.request('OPTIONS', path, {
      key: null,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': headers,
      },
    });
  }

  describe('preflight', () => {
    it('answers 204 to an allowed origin with the methods and headers the API takes', async () => {
      const response = await preflight(
        gateway,
        `/v1/tabs/${tabId}/messages`,
        allowedOrigin,
        'authorization, content-type, idempotency-key',
      );
      expectAllowedFor(response, 204, allowedOrigin);
      expect(listed(response.headers.get('access-control-allow-methods'))).toEqual(
        expect.arrayContaining(['get', 'post', 'patch', 'delete']),
      );
      expect(listed(response.headers.get('access-control-allow-headers'))).toEqual(
        expect.arrayContaining([
          'authorization',
          'content-type',
          'idempotency-key',
          'last-event-id',
          'x-request-id',
          'traceparent',
          'tracestate',
        ]),
      );
      expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(listed(response.headers.get('vary'))).toContain('origin');
    });

    it('needs no API key, on any path (the stream route included)', async () => {
      const response = await preflight(
        gateway,
        `/v1/tabs/${tabId}/events`,
        allowedOrigin,
        'authorization, last-event-id',
      );
      expectAllowedFor(response, 204, allowedOrigin);
    });

    it('lets W3C trace context through', async () => {
      const response = await preflight(
        gateway,
        '/v1/tabs',
        allowedOrigin,
        'content-type, traceparent, tracestate',
      );
      expectAllowedFor(response, 204, allowedOrigin);
      expect(listed(response.headers.get('access-control-allow-headers'))).toEqual(
        expect.arrayContaining(['traceparent', 'tracestate']),
      );
    });

    it('gives another origin no CORS header at all, and the API key is not asked for', async () => {
      const response = await preflight(gateway, '/v1/tabs', otherOrigin, 'authorization');
      expect(response.status).toBe(404);
      expect(corsHeaders(response.headers)).toEqual({});
    });

    it('gives no CORS header when CORS_ORIGINS is not set, as before', async () => {
      const response = await preflight(noCors, '/v1/tabs', allowedOrigin, 'authorization');
      expect(response.status).toBe(404);
      expect(corsHeaders(response.headers)).toEqual({});
    });

    it('allows every origin with *', async () => {
      const response = await preflight(anyOrigin, '/v1/tabs', otherOrigin, 'authorization');
      expectAllowedFor(response, 204, '*');
    });
  });

  describe('REST responses', () => {
    it('carry the allowed origin and the exposed headers, errors included', async () => {
      const listing = await gateway.request('GET', '/v1/tabs', {
        headers: { origin: allowedOrigin },
      });
      expectAllowedFor(listing, 200, allowedOrigin);
      expect(listed(listing.headers.get('access-control-expose-headers'))).toEqual(
        expect.arrayContaining([
          'retry-after',
          'x-ratelimit-remaining',
          'x-request-id',
          'idempotent-replayed',
        ]),
      );
      // The rate limit's headers the client is allowed to read are really there.
      expect(listing.headers.get('x-ratelimit-remaining')).not.toBeNull();

      const posted = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        body: { text: 'hello' },
        headers: { origin: allowedOrigin, 'idempotency-key': 'cors-1' },
      });
      expectAllowedFor(posted, 202, allowedOrigin);

      // A browser client must be able to read why it was refused.
      const refused = await gateway.request('GET', '/v1/tabs', {
        key: 'ck_wrong',
        headers: { origin: allowedOrigin },
      });
      expectAllowedFor(refused, 401, allowedOrigin);
    });

    it('carry no CORS header for another origin, which is still served as before', async () => {
      const response = await gateway.request('GET', '/v1/tabs', {
        headers: { origin: otherOrigin },
      });
      expect(response.status).toBe(200);
      expect(corsHeaders(response.headers)).toEqual({});
      expect(listed(response.headers.get('vary'))).toContain('origin');
    });
  });

  describe('SSE responses', () => {
    async function openStream(harness: GatewayHarness, origin: string) {
      const abort = new AbortController();
      const response = await fetch(`${harness.baseUrl}/v1/tabs/${tabId}/events`, {
        headers: { authorization: `Bearer ${harness.tenantA.key}`, origin },
        signal: abort.signal,
      });
      const headers = response.headers;
      const status = response.status;
      await response.body?.cancel().catch(() => undefined);
      abort.abort();
      return { status, headers };
    }

    it('carry the allowed origin on the event stream', async () => {
      const { status, headers } = await openStream(gateway, allowedOrigin);
      expect(status).toBe(200);
      expect(headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(headers.get('access-control-allow-origin')).toBe(allowedOrigin);
      expect(listed(headers.get('access-control-expose-headers'))).toContain('retry-after');
    });

    it('carry no CORS header for another origin', async () => {
      const { status, headers } = await openStream(gateway, otherOrigin);
      expect(status).toBe(200);
      expect(corsHeaders(headers)).toEqual({});
    });

    it('carry * with CORS_ORIGINS=*', async () => {
      const { headers } = await openStream(anyOrigin, otherOrigin);
      expect(headers.get('access-control-allow-origin')).toBe('*');
    });
  });
});
