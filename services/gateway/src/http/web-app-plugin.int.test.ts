import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { errorHandlerPlugin } from './error-handler';
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
    await app.close();
  });
});
