import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A running `/metrics` endpoint. */
export interface MetricsServer {
  /** Base URL, e.g. `http://127.0.0.1:9464`. */
  url: string;
  close(): Promise<void>;
}

/** The state of the worker's connections, as `/healthz` and `/readyz` report it. */
export interface ConnectionHealth {
  store: 'reachable' | 'unreachable';
  bus: 'reachable' | 'unreachable';
  /** How long the store has been unreachable. */
  unreachableForMs?: number;
}

/**
 * Serves `/metrics`, `/healthz` and `/readyz` with node:http (the worker has no other HTTP
 * surface). With `health`, both answer 503 while the store or the bus is unreachable, so a
 * health check sees a worker that cannot work while it waits the outage out.
 */
export async function serveWorkerMetrics(options: {
  registry: Registry;
  health?: () => Promise<ConnectionHealth>;
  host: string;
  /** 0 picks a free port. */
  port: number;
}): Promise<MetricsServer> {
  const { registry } = options;
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz' || path === '/readyz') {
      void answerHealth(response);
      return;
    }
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType }).end(text);
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(`Metrics collection failed: ${(error as Error).message}`);
      },
    );
  });
  async function answerHealth(response: ServerResponse): Promise<void> {
    const health = await options.health?.();
    const ready =
      health === undefined || (health.store === 'reachable' && health.bus === 'reachable');
    const body = { status: ready ? 'ok' : 'unavailable', ...health };
    response
      .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
      .end(JSON.stringify(body));
  }

  // Scrapers keep connections alive; close() must not wait for them.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
