import type { WebSocket } from 'ws';
import type { OutgoingEvent, StreamSink } from './stream-sink';

const END_GRACE_MS = 1_000;

/** Writes relay events as JSON text frames `{ event, data, id? }`. */
export function createWebSocketSink(
  socket: WebSocket,
  onEvent: (event: OutgoingEvent['event']) => void,
): StreamSink {
  return {
    begin() {},
    send(event) {
      if (socket.readyState !== socket.OPEN) return;
      const data = event.sharedDataJson ? event.sharedDataJson() : JSON.stringify(event.data);
      const id = event.id === undefined ? '' : `,"id":${event.id}`;
      socket.send(`{"event":"${event.event}","data":${data}${id}}`);
      onEvent(event.event);
    },
    bufferedBytes: () => socket.bufferedAmount,
    heartbeat() {
      if (socket.readyState === socket.OPEN) socket.ping();
    },
    end(final) {
      if (socket.readyState !== socket.OPEN) return;
      if (final) socket.send(JSON.stringify({ event: 'stream-end', data: final }));
      socket.close(final?.reason === 'shutdown' ? 1001 : 1000, final?.reason ?? 'closed');
      setTimeout(() => socket.terminate(), END_GRACE_MS).unref();
    },
  };
}
