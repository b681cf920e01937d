import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedError } from '../testing/expected-error';
import { closingGuardPlugin } from './closing-guard';
import { errorHandlerPlugin } from './error-handler';

// Through a gateway in shutdown the guard's window is too short to hit on purpose: Fastify marks
// itself closing, the gateway's preClose ends its streams, then idle connections are dropped at
// once and a request pipelined behind one in flight goes with that one's `connection: close`.
// So the guard is tested on its own, over real HTTP, with the closing state in the test's hand.
describe('closingGuardPlugin', () => {
  let closing = false;
  const app = Fastify();
  let baseUrl = '';

  beforeAll(async () => {
    await app.register(errorHandlerPlugin);
    await app.register(closingGuardPlugin, { isClosing: () => closing });
    app.get('/ping', async () => ({ ok: true }));
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('lets requests through while the gateway runs', async () => {
    const response = await fetch(`${baseUrl}/ping`);
    expect(response.status).toBe(200);
  });

  it('answers 503 unavailable with the error shape, Retry-After and connection: close once closing', async () => {
    closing = true;
    for (const path of ['/ping', '/no-such-route']) {
      const response = await fetch(`${baseUrl}${path}`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('2');
      expect(response.headers.get('connection')).toBe('close');
      expect(await response.json()).toEqual(expectedError('unavailable'));
    }
  });
});
