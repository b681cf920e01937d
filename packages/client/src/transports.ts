import { AsyncQueue } from './async-queue';
import type { WebSocketConstructor } from './client';
import { ChunklogError, errorFromResponse } from './errors';
import { SseParser } from './sse-parser';

/** An event off the wire, its data parsed, not yet checked. */
export interface WireStreamEvent {
  event: string;
  data: unknown;
}

/** How a stream reaches the gateway: SSE over fetch (headers allowed) or a WebSocket. */
export type StreamTransport = 'sse' | 'websocket';

/** Opens one connection; its events end when the server ends the stream or `signal` aborts. */
export interface ConnectInput {
  url: string;
  headers: Record<string, string>;
  signal: AbortSignal;
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  WebSocket: WebSocketConstructor | null;
}

/** SSE read with fetch's streaming body, so it runs in Node and browsers and sends headers. */
export async function* connectSse(input: ConnectInput): AsyncGenerator<WireStreamEvent> {
  const response = await input.fetch(input.url, {
    headers: { accept: 'text/event-stream', ...input.headers },
    signal: input.signal,
  });
  if (!response.ok) throw await errorFromResponse(response);
  if (response.body === null) {
    throw new ChunklogError('invalid_response', response.status, 'stream has no body');
  }
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
        yield { event: event.event, data: parseData(event.data) };
      }
    }
  } finally {
    // Leaving early (an abort, a consumer that stopped) releases the connection.
    await reader.cancel().catch(() => {});
  }
}

/** The same events over a WebSocket (frames `{ event, data, id? }`); no headers: use a ticket. */
export function connectWebSocket(input: ConnectInput): AsyncIterable<WireStreamEvent> {
  if (input.WebSocket === null) throw new TypeError('no WebSocket: pass options.WebSocket');
  const socket = new input.WebSocket(input.url.replace(/^http/, 'ws'));
  const close = () => socket.close();
  const queue = new AsyncQueue<WireStreamEvent>(close);
  input.signal.addEventListener('abort', () => {
    close();
    queue.end();
  });
  socket.addEventListener('message', (message: MessageEvent) => {
    try {
      const frame = JSON.parse(String(message.data)) as WireStreamEvent;
      queue.push({ event: frame.event, data: frame.data });
    } catch (error) {
      queue.end(new ChunklogError('invalid_response', 0, 'unreadable frame', { cause: error }));
      close();
    }
  });
  socket.addEventListener('error', () => {
    queue.end(new ChunklogError('network', 0, 'WebSocket failed'));
  });
  socket.addEventListener('close', () => queue.end());
  return queue;
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch (error) {
    throw new ChunklogError('invalid_response', 200, 'unreadable event data', { cause: error });
  }
}
