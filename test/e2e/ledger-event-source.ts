/**
 * A standard EventSource client (the `eventsource` package, as a browser would use it) whose
 * events feed a StreamLedger. Headers such as Authorization and Last-Event-ID go through its
 * `fetch` option; its own automatic reconnects add Last-Event-ID themselves.
 */
import { STREAM_EVENT_NAMES } from '@chunklog/chunk-core';
import { EventSource } from 'eventsource';
import type { StreamLedger } from './stream-ledger';

export interface LedgerEventSource {
  source: EventSource;
  /** Resolves on the first `open` (the gateway sends headers once its live subscription exists). */
  opened: Promise<void>;
  /** Drops the connection the way a client that goes away does. */
  close(): void;
}

export function openLedgerEventSource(
  url: string,
  ledger: StreamLedger,
  headers: Record<string, string> = {},
): LedgerEventSource {
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...headers, ...(init?.headers as Record<string, string>) },
      }),
  });
  let closed = false;
  for (const name of STREAM_EVENT_NAMES) {
    source.addEventListener(name, (message) => {
      if (!closed) ledger.receive(name, JSON.parse(message.data), message.lastEventId || undefined);
    });
  }
  // Every (re)connection starts a new delivery epoch: an open block is replayed from offset 0.
  const opened = new Promise<void>((resolve, reject) => {
    source.addEventListener('open', () => {
      ledger.startConnection();
      resolve();
    });
    source.addEventListener('error', (error) => {
      if (source.readyState === EventSource.CLOSED) {
        reject(new Error(`stream ${url} refused: ${error.code ?? ''} ${error.message}`));
      }
    });
  });
  return {
    source,
    opened,
    close() {
      if (closed) return;
      closed = true;
      ledger.endConnection();
      source.close();
    },
  };
}
