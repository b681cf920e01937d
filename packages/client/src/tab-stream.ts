import { AsyncQueue } from './async-queue';
import { type BackoffOptions, backoffDelay, sleep } from './backoff';
import type { ChunklogClient, StreamTicket } from './client';
import { type ChunklogError, isAbort, toChunklogError } from './errors';
import { ResumeFilter, type StreamEvent } from './resume-filter';
import {
  type ConnectInput,
  connectSse,
  connectWebSocket,
  type StreamTransport,
} from './transports';

/** `connecting` (first connection), `live` (caught up), `reconnecting`, `closed`. */
export type StreamState = 'idle' | 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface TabStreamOptions {
  /** Deliver seals with a seq above this (default 0: the whole log, then live). */
  after?: number;
  /** `sse` (default: fetch, headers allowed) or `websocket` (the client's WebSocket). */
  transport?: StreamTransport;
  /**
   * Open with a stream ticket (`?ticket=`) instead of the Authorization header. Default: on for
   * WebSocket streams with an API key (browsers cannot send headers on them), off otherwise.
   */
  ticket?: boolean;
  /** A ticket is renewed before a (re)connect once it has less than this left (default 5 s). */
  ticketMarginMs?: number;
  backoff?: BackoffOptions;
}

type Listeners = {
  event: Set<(event: StreamEvent) => void>;
  state: Set<(state: StreamState) => void>;
  end: Set<(error: ChunklogError | null) => void>;
};

/**
 * The events a stream delivers, by name. Typed against chunk-core's event types, so the compiler
 * holds it equal to them (chunk-core's STREAM_EVENT_NAMES is built from a zod enum: reading it
 * would put zod into every browser bundle of the client).
 */
const knownEvents: Record<StreamEvent['event'], true> = {
  'turn-start': true,
  'chunk-open': true,
  'chunk-delta': true,
  'chunk-seal': true,
  'turn-retry': true,
  'turn-done': true,
  'approval-requested': true,
  'approval-resolved': true,
  'stream-live': true,
  'stream-end': true,
};

/**
 * A tab's live events, exactly once and in order: an async iterable (`for await`) and a callback
 * form (`on('event', …)`). It connects when its first consumer attaches, reconnects by itself
 * with backoff and jitter (after a drop, an error or a `stream-end`), resumes after the last
 * seq it delivered, renews its stream ticket before reconnecting, and never delivers a seq or a
 * character of an open block twice nor skips one. It ends on `close()`, on a `stream-end` for a
 * deleted tab (done), or on an error retrying cannot fix (404, 401 without a ticket, 400).
 */
export class TabStream implements AsyncIterable<StreamEvent> {
  private readonly filter: ResumeFilter;
  private readonly listeners: Listeners = { event: new Set(), state: new Set(), end: new Set() };
  private currentState: StreamState = 'idle';
  private readonly closer = new AbortController();
  private connection: AbortController | null = null;
  private ticket: StreamTicket | null = null;
  private readonly transport: StreamTransport;
  private readonly useTicket: boolean;
  private connectionCount = 0;
  private endError: ChunklogError | null = null;

  constructor(
    private readonly client: ChunklogClient,
    readonly tabId: string,
    private readonly options: TabStreamOptions = {},
  ) {
    this.filter = new ResumeFilter(options.after ?? 0);
    this.transport = options.transport ?? 'sse';
    this.useTicket = options.ticket ?? (this.transport === 'websocket' && client.apiKey !== null);
    if (this.transport === 'websocket' && client.WebSocket === null) {
      throw new TypeError('no WebSocket in this runtime: pass options.WebSocket to the client');
    }
  }

  /** The last seq delivered: where the next connection resumes. */
  get lastSeq(): number {
    return this.filter.lastSeq;
  }

  get state(): StreamState {
    return this.currentState;
  }

  /** Connections opened so far (1 + reconnects). */
  get connections(): number {
    return this.connectionCount;
  }

  /** Calls `listener` for each event, state change, or once at the end; returns the unsubscribe. */
  on(kind: 'event', listener: (event: StreamEvent) => void): () => void;
  on(kind: 'state', listener: (state: StreamState) => void): () => void;
  on(kind: 'end', listener: (error: ChunklogError | null) => void): () => void;
  on(kind: keyof Listeners, listener: (value: never) => void): () => void {
    const set = this.listeners[kind] as Set<(value: never) => void>;
    set.add(listener);
    if (kind === 'event') this.start();
    return () => {
      set.delete(listener);
    };
  }

  /** Connects (once); attaching the first listener or iterator does it too. */
  start(): void {
    if (this.currentState !== 'idle') return;
    this.setState('connecting');
    void this.run();
  }

  /** Ends the stream: the connection is dropped, iterators finish, `end` fires with null. */
  close(): void {
    this.finish(null);
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    if (this.currentState === 'closed') {
      const queue = new AsyncQueue<StreamEvent>();
      queue.end(this.endError);
      return queue;
    }
    let detach = () => {};
    const queue = new AsyncQueue<StreamEvent>(() => {
      detach();
      // A consumer that stopped reading, with nobody else listening, is done with the stream.
      if (this.listeners.event.size === 0) this.close();
    });
    const offEvent = this.on('event', (event) => queue.push(event));
    const offEnd = this.on('end', (error) => queue.end(error));
    detach = () => {
      offEvent();
      offEnd();
    };
    return queue;
  }

  private async run(): Promise<void> {
    let failures = 0;
    let ticketRefused = false;
    while (!this.closer.signal.aborted) {
      const connection = new AbortController();
      this.connection = connection;
      let retryAfterMs: number | null = null;
      let received = false;
      try {
        this.connectionCount += 1;
        this.filter.connected();
        for await (const wire of this.connect(await this.connectInput(connection.signal))) {
          received = true;
          if (!Object.hasOwn(knownEvents, wire.event)) continue;
          const verdict = this.filter.filter(wire as StreamEvent);
          if (verdict === 'gap') break;
          if (verdict === null) continue;
          // Progress: a connection that delivered something backs off from the start again.
          failures = 0;
          this.emit(verdict);
          if (verdict.event === 'stream-live') {
            ticketRefused = false;
            this.setState('live');
          } else if (verdict.event === 'stream-end' && verdict.data.reason === 'tab_deleted') {
            this.finish(null);
            return;
          }
        }
      } catch (error) {
        if (this.closer.signal.aborted) return;
        if (!isAbort(error)) {
          let failure = toChunklogError(error);
          if (this.transport === 'websocket' && !received && failure.status === 0) {
            // A refused upgrade shows no status to a WebSocket: ask over HTTP why (404, 401).
            failure = (await this.probe()) ?? failure;
          }
          if (failure.status === 401 && this.useTicket && !ticketRefused) {
            // Refused although it looked valid (clocks apart, a restarted gateway's secret):
            // one more try with a fresh ticket before backing off.
            ticketRefused = true;
            this.ticket = null;
            connection.abort();
            continue;
          }
          if (!failure.retryable) {
            this.finish(failure);
            return;
          }
          retryAfterMs = failure.retryAfterMs;
        }
      }
      connection.abort();
      if (this.closer.signal.aborted) return;
      this.setState('reconnecting');
      failures += 1;
      await sleep(retryAfterMs ?? backoffDelay(failures, this.options.backoff), this.closer.signal);
    }
  }

  /** The API's error for this tab now (null when it reads fine or the read fails to arrive). */
  private async probe(): Promise<ChunklogError | null> {
    try {
      await this.client.getTab(this.tabId, this.closer.signal);
      return null;
    } catch (error) {
      const failure = toChunklogError(error);
      return failure.retryable ? null : failure;
    }
  }

  private connect(input: ConnectInput) {
    return this.transport === 'websocket' ? connectWebSocket(input) : connectSse(input);
  }

  private async connectInput(signal: AbortSignal): Promise<ConnectInput> {
    const after = this.filter.lastSeq;
    const query: Record<string, string | number> = { after };
    let headers: Record<string, string> = { 'last-event-id': String(after) };
    if (this.useTicket) {
      const margin = this.options.ticketMarginMs ?? 5_000;
      if (this.ticket === null || this.ticket.expiresAt - this.client.clock() < margin) {
        this.ticket = await this.client.streamTicket(this.tabId, signal);
      }
      query.ticket = this.ticket.ticket;
    } else {
      headers = { ...headers, ...this.client.authHeaders() };
    }
    const path = `/v1/tabs/${encodeURIComponent(this.tabId)}/${this.transport === 'sse' ? 'events' : 'ws'}`;
    return {
      url: this.client.url(path, query),
      headers,
      signal,
      fetch: (url, init) => this.client.fetch(url, init),
      WebSocket: this.client.WebSocket,
    };
  }

  private emit(event: StreamEvent): void {
    for (const listener of [...this.listeners.event]) callSafely(listener, event);
  }

  private setState(state: StreamState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    for (const listener of [...this.listeners.state]) callSafely(listener, state);
  }

  private finish(error: ChunklogError | null): void {
    if (this.currentState === 'closed') return;
    this.endError = error;
    this.closer.abort();
    this.connection?.abort();
    this.setState('closed');
    for (const listener of [...this.listeners.end]) callSafely(listener, error);
  }
}

/** A listener that throws must not stop the stream; its error is reported, not swallowed. */
function callSafely<T>(listener: (value: T) => void, value: T): void {
  try {
    listener(value);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
