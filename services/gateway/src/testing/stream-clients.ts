/** Real stream clients for tests: the `eventsource` package and `ws`, recording what arrives. */

import { type Chunk, STREAM_EVENT_NAMES } from '@chunklog/chunk-core';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';

export interface ReceivedEvent {
  event: string;
  data: unknown;
  id?: string;
  /** performance.now() at arrival. */
  receivedAt: number;
}

export interface RecordingClient {
  events: ReceivedEvent[];
  /** Resolves when an event satisfying the predicate has arrived (checks past ones too). */
  waitFor(predicate: (event: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  close(): void;
}

function recorder(): {
  events: ReceivedEvent[];
  push(event: ReceivedEvent): void;
  waitFor: RecordingClient['waitFor'];
} {
  const events: ReceivedEvent[] = [];
  const waiters = new Set<{
    predicate: (event: ReceivedEvent) => boolean;
    resolve: (event: ReceivedEvent) => void;
  }>();
  return {
    events,
    push(event) {
      events.push(event);
      for (const waiter of waiters) {
        if (waiter.predicate(event)) {
          waiters.delete(waiter);
          waiter.resolve(event);
        }
      }
    },
    waitFor(predicate, timeoutMs = 5_000) {
      const found = events.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (event: ReceivedEvent) => {
            clearTimeout(timer);
            resolve(event);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`timed out waiting for an event (got ${events.length})`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
  };
}

/** Opens an EventSource; headers (Authorization, Last-Event-ID) are added to its fetches. */
export function openEventSource(
  url: string,
  headers: Record<string, string> = {},
): RecordingClient & { source: EventSource; errors: unknown[]; opened: Promise<void> } {
  const record = recorder();
  const errors: unknown[] = [];
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...headers, ...(init?.headers as Record<string, string>) },
      }),
  });
  for (const name of STREAM_EVENT_NAMES) {
    source.addEventListener(name, (message) => {
      record.push({
        event: name,
        data: JSON.parse(message.data),
        id: message.lastEventId || undefined,
        receivedAt: performance.now(),
      });
    });
  }
  source.addEventListener('error', (error) => errors.push(error));
  // The gateway sends its headers once the live subscription exists: `open` means nothing
  // published from now on can be missed.
  const opened = new Promise<void>((resolve) => source.addEventListener('open', () => resolve()));
  return {
    events: record.events,
    waitFor: record.waitFor,
    close: () => source.close(),
    source,
    errors,
    opened,
  };
}

/** Opens a WebSocket stream; resolves once open (rejects on an HTTP refusal, with its status). */
export async function openWebSocket(
  url: string,
  headers: Record<string, string> = {},
): Promise<RecordingClient & { socket: WebSocket }> {
  const record = recorder();
  const socket = new WebSocket(url, { headers });
  socket.on('message', (raw) => {
    const frame = JSON.parse(String(raw)) as { event: string; data: unknown; id?: number };
    record.push({
      event: frame.event,
      data: frame.data,
      id: frame.id === undefined ? undefined : String(frame.id),
      receivedAt: performance.now(),
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (request, response) => {
      // With this listener ws leaves the refused request open: close it like a browser would.
      request.destroy();
      reject(new Error(`websocket refused with ${response.statusCode}`));
    });
    socket.once('error', reject);
  });
  return { events: record.events, waitFor: record.waitFor, close: () => socket.close(), socket };
}

/** The chunks of the `chunk-seal` events a client received, in arrival order. */
export function sealsOf(events: ReceivedEvent[]): Chunk[] {
  return events
    .filter((event) => event.event === 'chunk-seal')
    .map((event) => (event.data as { chunk: Chunk }).chunk);
}
