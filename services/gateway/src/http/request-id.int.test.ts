import type { ChunkStore } from '@chunklog/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../testing/captured-log';
import { expectedError } from '../testing/expected-error';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { embeddedBackend } from '../testing/test-backends';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  let gateway: GatewayHarness;
  const log = capturedLog('info');

  beforeAll(async () => {
    const backend = await embeddedBackend.create();
    // listTabs fails as a driver would, with the reason in its cause.
    const store: ChunkStore = new Proxy(backend.store, {
      get(target, property, receiver) {
        if (property === 'listTabs') {
          return async () => {
            throw new Error('list tabs failed', { cause: new Error('disk quota exceeded') });
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    gateway = await startGateway(
      { name: 'embedded, listTabs failing', create: async () => ({ ...backend, store }) },
      { logger: log.logger },
    );
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const linesOf = (requestId: string) => log.lines.filter((line) => line.requestId === requestId);

  it('names every answer with x-request-id, the same in error bodies and on log lines', async () => {
    const ok = await gateway.request('GET', '/healthz', { key: null });
    expect(ok.headers.get('x-request-id')).toMatch(UUID);

    const refused = await gateway.request('GET', `/v1/tabs/${crypto.randomUUID()}`);
    const requestId = refused.headers.get('x-request-id');
    expect(requestId).toMatch(UUID);
    expect(refused.body).toEqual(expectedError('not_found'));
    expect((refused.body as { error: { requestId: string } }).error.requestId).toBe(requestId);
    expect(linesOf(requestId!).map((line) => line.msg)).toEqual(
      expect.arrayContaining(['incoming request', 'rejected', 'request completed']),
    );
    expect(linesOf(requestId!).every((line) => line.component === 'http')).toBe(true);

    const unmatched = await gateway.request('GET', '/nowhere', { key: null });
    expect(unmatched.status).toBe(404);
    expect((unmatched.body as { error: { requestId: string } }).error.requestId).toBe(
      unmatched.headers.get('x-request-id'),
    );
  });

  it("keeps a caller's valid x-request-id and replaces one that is not", async () => {
    const kept = await gateway.request('GET', '/healthz', {
      key: null,
      headers: { 'x-request-id': 'lb-7f3a:42' },
    });
    expect(kept.headers.get('x-request-id')).toBe('lb-7f3a:42');
    expect(linesOf('lb-7f3a:42').length).toBeGreaterThan(0);

    for (const bad of ['has spaces in it', 'x'.repeat(129), '{"level":60}']) {
      const replaced = await gateway.request('GET', '/healthz', {
        key: null,
        headers: { 'x-request-id': bad },
      });
      expect(replaced.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('logs a failed request with its stack and cause under its id, and answers only its id', async () => {
    const failed = await gateway.request('GET', '/v1/tabs');
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual(expectedError('internal', 'internal error'));
    const requestId = (failed.body as { error: { requestId: string } }).error.requestId;
    const line = linesOf(requestId).find((entry) => entry.msg === 'request failed');
    expect(line).toMatchObject({ level: 50, err: { message: expect.any(String) } });
    const stack = String((line?.err as { stack?: unknown } | undefined)?.stack);
    expect(stack).toContain('Error: list tabs failed');
    expect(stack).toContain('caused by: Error: disk quota exceeded');
  });
});
