/**
 * The gateway's security headers on what it answers, through a real port: the chat app with its
 * own policy, the API (JSON, errors, SSE) with a policy that loads nothing, /docs with the
 * Swagger UI's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { embeddedBackend } from '../testing/test-backends';
import {
  apiContentSecurityPolicy,
  docsContentSecurityPolicy,
  webAppContentSecurityPolicy,
} from './security-headers';

let gateway: GatewayHarness;
beforeAll(async () => {
  gateway = await startGateway(embeddedBackend);
});
afterAll(async () => {
  await gateway?.close();
});

function expectCommonHeaders(headers: Headers, what: string): void {
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('referrer-policy'), what).toBe('no-referrer');
}

describe('security headers', () => {
  it("send the app's policy with the app at /", async () => {
    const response = await fetch(`${gateway.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('content-security-policy')).toBe(webAppContentSecurityPolicy);
    expectCommonHeaders(response.headers, 'GET /');
  });

  it('send a policy that loads nothing with API answers, errors and 404s alike', async () => {
    const tabId = await gateway.createTab();
    const answers = [
      await gateway.request('GET', '/v1/tabs'),
      await gateway.request('GET', `/v1/tabs/${tabId}/chunks`),
      await gateway.request('GET', '/v1/tabs', { key: null }),
      await gateway.request('GET', '/v1/no-such-route'),
      await gateway.request('POST', '/v1/tabs', { rawBody: '{not json' }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 401, 404, 400]);
    for (const answer of answers) {
      expect(answer.headers.get('content-security-policy')).toBe(apiContentSecurityPolicy);
      expectCommonHeaders(answer.headers, String(answer.status));
    }
  });

  it('send them with an SSE stream', async () => {
    const tabId = await gateway.createTab();
    const abort = new AbortController();
    const response = await fetch(`${gateway.baseUrl}/v1/tabs/${tabId}/events`, {
      headers: { authorization: `Bearer ${gateway.tenantA.key}` },
      signal: abort.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('content-security-policy')).toBe(apiContentSecurityPolicy);
    expectCommonHeaders(response.headers, 'SSE');
    abort.abort();
  });

  it("leave /docs the Swagger UI's own policy", async () => {
    for (const path of ['/docs', '/docs/static/index.html', '/docs/json']) {
      const response = await fetch(`${gateway.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toBe(docsContentSecurityPolicy);
      expectCommonHeaders(response.headers, path);
      await response.arrayBuffer();
    }
  });
});
