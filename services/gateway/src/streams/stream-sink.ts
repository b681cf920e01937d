import type {
  LiveEvent,
  StreamEndEvent,
  StreamEndReason as StreamEndReasonOfCore,
  StreamLiveEvent,
} from '@chunklog/chunk-core';

/** Why the gateway ended a stream; sent in the final `stream-end` event (chunk-core's schema). */
export type StreamEndReason = StreamEndReasonOfCore;

/** The last event of a stream the gateway ends: reconnect with `after` (or Last-Event-ID). */
export type StreamEnd = StreamEndEvent;

/** One event on its way to a client; `shared` carries the hub's once-encoded JSON when unchanged. */
export type OutgoingEvent = (
  | { event: LiveEvent['event']; data: LiveEvent['data'] }
  | { event: 'stream-live'; data: StreamLiveEvent }
) & {
  /** The seq, on `chunk-seal` events only. */
  id?: number;
  sharedDataJson?: () => string;
};

/** A transport (SSE response, WebSocket) the relay writes to. */
export interface StreamSink {
  /** Called once the live subscription is in place, before any event. */
  begin(): void;
  send(event: OutgoingEvent): void;
  /** Bytes accepted but not yet flushed to the network: the slow-client measure. */
  bufferedBytes(): number;
  heartbeat(): void;
  /** Sends the final event (when given) and closes; the client may be gone already. */
  end(final: StreamEnd | null): void;
}
