import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findAncestorWith } from '@chunklog/runtime';
import type { FastifyInstance } from 'fastify';
import { securityHeaders, webAppContentSecurityPolicy } from './security-headers';

/**
 * Where `npm run build -w @chunklog/web` puts the chat app (the root `start` scripts run it),
 * found upward from this module, so the source and the bundles in dist/ both reach it.
 */
export const defaultWebAppDir = join(
  findAncestorWith(import.meta.url, 'apps/web') ??
    fileURLToPath(new URL('../../../../', import.meta.url)),
  'apps/web/dist',
);

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const notBuilt = `<!doctype html><meta charset="utf-8"><title>chunklog</title>
<p>The chat app is not built. Run <code>npm run build -w @chunklog/web</code> (the root
<code>npm start</code> does) and restart. The API is at <a href="/docs">/docs</a>.</p>`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name.startsWith('.')) return [];
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * Serves the built chat app from memory: `/`, then one route per built file, so every other URL
 * still gets the API's JSON 404. Public and out of the OpenAPI document; every file carries the
 * app's Content-Security-Policy, since the page renders untrusted text and keeps an API key.
 */
export async function webAppPlugin(
  app: FastifyInstance,
  options: { dir?: string } = {},
): Promise<void> {
  const dir = options.dir ?? defaultWebAppDir;
  const config = { auth: 'public' as const, rateLimit: false as const };
  const schema = { hide: true };
  const headers = { ...securityHeaders, 'content-security-policy': webAppContentSecurityPolicy };
  if (!existsSync(join(dir, 'index.html'))) {
    app.log.warn({ dir }, 'web app not built: / serves a note instead');
    app.get('/', { config, schema }, (_request, reply) =>
      reply
        .headers(headers)
        .type(contentTypes['.html'] ?? 'text/html')
        .send(notBuilt),
    );
    return;
  }
  for (const file of filesUnder(dir)) {
    const path = `/${relative(dir, file).split(sep).join('/')}`;
    const body = readFileSync(file);
    const type = contentTypes[extname(file)] ?? 'application/octet-stream';
    // Vite names built assets by content hash; index.html names the current ones.
    const cache = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    const route = path === '/index.html' ? '/' : path;
    app.get(route, { config, schema }, (_request, reply) =>
      reply.headers(headers).type(type).header('cache-control', cache).send(body),
    );
  }
}
