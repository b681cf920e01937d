import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { errorHandlerPlugin } from './error-handler';
import { webAppContentSecurityPolicy } from './security-headers';
import { webAppPlugin } from './web-app-plugin';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function serve(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'chunklog-web-dist-'));
  dirs.push(dir);
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), body);
  }
  const app = Fastify();
  await app.register(errorHandlerPlugin);
  await app.register(webAppPlugin, { dir });
  return app;
}

describe('the web app plugin', () => {
  it('serves index.html at / and each built file at its path, hashed assets cached for good', async () => {
    const app = await serve({
      'index.html': '<!doctype html><title>chunklog</title>',
      'assets/index-abc123.js': 'console.log(1)',
      'assets/index-abc123.css': 'body{}',
      '.source-hash': 'not served',
    });
    const index = await app.inject({ url: '/' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.body).toContain('<title>chunklog</title>');
    const script = await app.inject({ url: '/assets/index-abc123.js' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toContain('immutable');
    expect(script.body).toBe('console.log(1)');
    expect((await app.inject({ url: '/assets/index-abc123.css' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/.source-hash' })).statusCode).toBe(404);
    await app.close();
  });

  it('leaves every other path to the JSON 404, /v1 ones and unknown assets alike', async () => {
    const app = await serve({ 'index.html': 'app' });
    for (const url of ['/v1/nope', '/assets/missing.js', '/index.html/x', '/../package.json']) {
      const response = await app.inject({ url });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ error: { code: 'not_found' } });
    }
    await app.close();
  });

  it('answers / with a note saying how to build the app when it is not built', async () => {
    const app = await serve({});
    const response = await app.inject({ url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('npm run build -w @chunklog/web');
    expectAppHeaders(response.headers);
    await app.close();
  });

  it("sends the app's Content-Security-Policy and security headers with the page and every asset", async () => {
    const app = await serve({
      'index.html': '<!doctype html><title>chunklog</title>',
      'assets/index-abc123.js': 'console.log(1)',
      'assets/index-abc123.css': 'body{}',
    });
    for (const url of ['/', '/assets/index-abc123.js', '/assets/index-abc123.css']) {
      expectAppHeaders((await app.inject({ url })).headers);
    }
    await app.close();
  });
});

/** The headers of the app's files: its strict policy, no sniffing, framing or referrer. */
function expectAppHeaders(headers: Record<string, unknown>): void {
  expect(headers['content-security-policy']).toBe(webAppContentSecurityPolicy);
  const policy = new Map(
    webAppContentSecurityPolicy.split('; ').map((directive) => {
      const [name, ...values] = directive.split(' ');
      return [name, values] as const;
    }),
  );
  expect(policy.get('default-src')).toEqual(["'self'"]);
  expect(policy.get('script-src')).toEqual(["'self'"]);
  expect(policy.get('style-src')).toEqual(["'self'"]);
  expect(policy.get('img-src')).toEqual(["'self'", 'data:', 'blob:']);
  expect(policy.get('connect-src')).toEqual(["'self'"]);
  expect(policy.get('object-src')).toEqual(["'none'"]);
  expect(policy.get('base-uri')).toEqual(["'none'"]);
  expect(policy.get('form-action')).toEqual(["'self'"]);
  expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('no-referrer');
}
