import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the receiver got: its headers and exact body. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  /** Where to point an endpoint. */
  url: string;
  received: ReceivedWebhook[];
  /** Resolves with request number `count` (1-based) once it has arrived. */
  request(count: number, timeoutMs?: number): Promise<ReceivedWebhook>;
  /** Ends every open connection (answers still held included) and stops listening. */
  close(): Promise<void>;
}

/**
 * A real HTTP server standing in for a customer's webhook endpoint. `answer` gives the status
 * of request number `count` (1-based); a promise that stays pending holds the answer back, as a
 * receiver that hangs does.
 */
export async function startWebhookReceiver(
  answer: (count: number, request: ReceivedWebhook) => number | Promise<number>,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const webhook = { headers: request.headers, body: Buffer.concat(parts).toString('utf8') };
      received.push(webhook);
      for (const waiter of waiters) waiter();
      void Promise.resolve(answer(received.length, webhook)).then((status) => {
        if (!response.destroyed) response.writeHead(status).end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/chunklog`,
    received,
    request(count, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const webhook = received[count - 1];
          if (webhook === undefined) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(webhook);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${received.length} of ${count} webhook requests arrived in time`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
