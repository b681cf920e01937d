import type { ServerResponse } from 'node:http';
import { errorBody, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../http/error-handler';
import type { OutgoingEvent, StreamSink } from './stream-sink';

/** After a final event, how long a client that does not read gets before its socket is dropped. */
const END_GRACE_MS = 1_000;

/** Writes relay events as Server-Sent Events (`event:`, `id:` on seals, `data:` JSON). */
export function createSseSink(
  response: ServerResponse,
  onEvent: (event: OutgoingEvent['event']) => void,
  /** For the error body when the stream ends before it began. */
  requestId: string,
): StreamSink {
  return {
    begin() {
      // Headers go out only once the live subscription exists: a client whose EventSource has
      // fired `open` misses nothing published afterwards.
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      response.write('retry: 1000\n\n');
    },
    send(event) {
      const data = event.sharedDataJson ? event.sharedDataJson() : JSON.stringify(event.data);
      const id = event.id === undefined ? '' : `id: ${event.id}\n`;
      response.write(`event: ${event.event}\n${id}data: ${data}\n\n`);
      onEvent(event.event);
    },
    bufferedBytes: () => response.writableLength,
    heartbeat() {
      response.write(': heartbeat\n\n');
    },
    end(final) {
      if (response.writableEnded || response.destroyed) return;
      if (!response.headersSent) {
        response.writeHead(503, {
          'content-type': 'application/json',
          'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
        });
        response.end(JSON.stringify(errorBody('unavailable', 'stream ended', requestId)));
        return;
      }
      if (final) response.end(`event: stream-end\ndata: ${JSON.stringify(final)}\n\n`);
      else response.end();
      // A client that stopped reading never drains the final event: do not hold its buffer.
      setTimeout(() => response.destroy(), END_GRACE_MS).unref();
    },
  };
}
