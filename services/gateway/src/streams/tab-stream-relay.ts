import type { Bus } from '@chunklog/bus';
import {
  type Chunk,
  type ChunkOpenEvent,
  NotFoundError,
  type OpenBlockSnapshot,
  OpenBlockSnapshotSchema,
  placeDelta,
  placeSeal,
  snapshotSubject,
} from '@chunklog/chunk-core';
import type { ChunkReader, TabStore } from '@chunklog/store';
import type { FastifyBaseLogger } from 'fastify';
import type { OutgoingEvent, StreamEndReason, StreamSink } from './stream-sink';
import type { HubEvent, TabEventHub } from './tab-event-hub';

export interface TabStreamRelayOptions {
  tabId: string;
  /** Resume point: every chunk with seq > after is delivered. */
  after: number;
  store: Pick<ChunkReader, 'page'> & Pick<TabStore, 'getTab'>;
  bus: Bus;
  hub: TabEventHub;
  sink: StreamSink;
  logger: FastifyBaseLogger;
  /** Live events waiting to be written above which the client is cut off. */
  maxQueuedEvents: number;
  /** Bytes buffered in the transport above which the client is cut off. */
  maxBufferedBytes: number;
  snapshotTimeoutMs: number;
  onEnd?: (reason: StreamEndReason | 'closed') => void;
}

const CATCH_UP_PAGE = 500;
/** Recently sealed block ids, kept to drop late open/delta events of blocks already sealed. */
const SEALED_MEMORY = 64;
/** Blocks opened in this stream and not sealed: more than one only around a takeover. */
const OPEN_MEMORY = 16;

/**
 * The resume contract (docs/architecture.md, "Streams and resume"), shared by SSE and
 * WebSocket: subscribe first (buffering), catch up from the store by seq, replay the open block,
 * then relay live events, filling gaps from the store and trimming deltas so each seq and each
 * character goes out once.
 */
export class TabStreamRelay {
  private lastSeq: number;
  /**
   * The blocks this stream has opened and not yet seen sealed, with how many of each one's
   * characters it has sent. Usually one; a worker that lost its tab to a takeover may still
   * stream its block (never to be sealed) beside the new holder's, and a block this stream
   * opened must never be opened again in it, nor its characters sent twice.
   */
  private readonly openBlocks = new Map<string, { sentLength: number }>();
  private readonly sealedIds = new Set<string>();
  /**
   * Blocks whose deltas could not be placed and whose snapshot did not come back: their later
   * deltas are dropped (their seal, from the bus or the store, carries the whole text) rather
   * than each waiting out another snapshot request and stalling the stream.
   */
  private readonly unplaceableIds = new Set<string>();
  /** Live events, and catch-up requests from the hub's reconcile, in arrival order. */
  private readonly queue: (HubEvent | { storeAhead: number })[] = [];
  /** The transport has been started (SSE headers sent): heartbeats may go out. */
  private begun = false;
  private live = false;
  private pumping = false;
  private ended = false;
  private leaveHub: (() => void) | null = null;

  constructor(private readonly options: TabStreamRelayOptions) {
    this.lastSeq = options.after;
  }

  /** The last seq delivered (the resume point if the stream ends now). */
  get deliveredSeq(): number {
    return this.lastSeq;
  }

  async start(): Promise<void> {
    const { hub, tabId } = this.options;
    // Subscribing before reading the store is what makes the hand-over gap-free: anything
    // sealed after the catch-up query is already in the queue.
    try {
      this.leaveHub = await hub.join(tabId, {
        event: (event) => this.receive(event),
        storeAhead: (seq) => {
          if (seq > this.lastSeq) this.receive({ storeAhead: seq });
        },
        tabDeleted: () => this.end('tab_deleted'),
      });
      if (this.ended) return this.leave();
      // The tab as of the subscription: later turn changes are in the queue as events.
      const tab = await this.options.store.getTab(this.options.tabId);
      if (this.ended) return;
      this.options.sink.begin();
      this.begun = true;
      await this.catchUp(Number.POSITIVE_INFINITY);
      if (tab.status === 'running') await this.replayOpenBlock();
      this.send({
        event: 'stream-live',
        data: {
          tabId: this.options.tabId,
          after: this.lastSeq,
          status: tab.status,
          activeTurnId: tab.activeTurnId,
        },
      });
      this.live = true;
      await this.pump();
    } catch (error) {
      this.fail(error);
    }
  }

  /** The client went away: stop without a final event. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.leave();
    this.options.onEnd?.('closed');
  }

  /** The gateway ends the stream, telling the client where to resume. */
  end(reason: StreamEndReason): void {
    if (this.ended) return;
    this.ended = true;
    this.leave();
    this.options.sink.end({ reason, after: this.lastSeq });
    this.options.onEnd?.(reason);
  }

  heartbeat(): void {
    // Before begin() a write would send default headers ahead of the stream's own.
    if (this.begun && !this.ended) this.options.sink.heartbeat();
  }

  private leave(): void {
    this.queue.length = 0;
    this.leaveHub?.();
    this.leaveHub = null;
  }

  private receive(event: HubEvent | { storeAhead: number }): void {
    if (this.ended) return;
    this.queue.push(event);
    if (this.queue.length > this.options.maxQueuedEvents) {
      this.end('slow_client');
      return;
    }
    if (this.live && !this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.ended) {
        const item = this.queue.shift();
        if (!item) break;
        const pending = 'storeAhead' in item ? this.catchUp(item.storeAhead) : this.handle(item);
        if (pending) await pending;
        if (this.options.sink.bufferedBytes() > this.options.maxBufferedBytes) {
          this.end('slow_client');
          return;
        }
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.pumping = false;
    }
  }

  /** Returns a promise only when the event needs I/O (gap fill, snapshot), to keep the hot path sync. */
  private handle(event: HubEvent): Promise<void> | undefined {
    const live = event.live;
    switch (live.event) {
      case 'chunk-seal': {
        const seq = live.data.chunk.seq;
        const placement = placeSeal(this.lastSeq, seq);
        if (placement === 'duplicate') return undefined;
        if (placement === 'gap') {
          return this.catchUp(seq - 1).then(() => this.sendSeal(live.data.chunk, event));
        }
        this.sendSeal(live.data.chunk, event);
        return undefined;
      }
      case 'chunk-open': {
        if (this.sealedIds.has(live.data.id) || this.openBlocks.has(live.data.id)) return undefined;
        this.rememberOpen(live.data.id, 0);
        this.send({ event: 'chunk-open', data: live.data, sharedDataJson: event.dataJson });
        return undefined;
      }
      case 'chunk-delta': {
        const { id, offset, text } = live.data;
        if (this.sealedIds.has(id) || this.unplaceableIds.has(id)) return undefined;
        const open = this.openBlocks.get(id);
        if (!open || placeDelta(open.sentLength, offset, text).kind === 'gap') {
          // A delta we cannot place (its open or an earlier delta never reached us): the
          // worker's snapshot has the characters in between.
          return this.resync(id).then(() => this.sendDelta(id, offset, text, event));
        }
        this.sendDelta(id, offset, text, event);
        return undefined;
      }
      case 'turn-start':
      case 'turn-retry':
      case 'turn-done':
      case 'approval-requested':
      case 'approval-resolved':
        this.send({ event: live.event, data: live.data, sharedDataJson: event.dataJson });
        return undefined;
      default: {
        const exhaustive: never = live;
        throw new Error(`unknown live event ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  private sendDelta(id: string, offset: number, text: string, event: HubEvent): void {
    const open = this.openBlocks.get(id);
    if (this.ended || !open) return;
    const placement = placeDelta(open.sentLength, offset, text);
    if (placement.kind !== 'fresh') return;
    this.send({
      event: 'chunk-delta',
      data: { tabId: this.options.tabId, id, offset: placement.offset, text: placement.text },
      sharedDataJson: placement.whole ? event.dataJson : undefined,
    });
    open.sentLength = offset + text.length;
  }

  private sendSeal(chunk: Chunk, event: HubEvent | null): void {
    if (this.ended || placeSeal(this.lastSeq, chunk.seq) === 'duplicate') return;
    this.send({
      event: 'chunk-seal',
      data: { tabId: this.options.tabId, chunk },
      id: chunk.seq,
      sharedDataJson: event?.dataJson,
    });
    this.lastSeq = chunk.seq;
    this.sealedIds.add(chunk.id);
    if (this.sealedIds.size > SEALED_MEMORY) {
      const oldest = this.sealedIds.values().next().value;
      if (oldest !== undefined) this.sealedIds.delete(oldest);
    }
    this.openBlocks.delete(chunk.id);
    this.unplaceableIds.delete(chunk.id);
  }

  /** Sends every stored chunk with lastSeq < seq <= untilSeq, in order. */
  private async catchUp(untilSeq: number): Promise<void> {
    while (!this.ended && this.lastSeq < untilSeq) {
      const page = await this.options.store.page(this.options.tabId, {
        after: this.lastSeq,
        limit: CATCH_UP_PAGE,
      });
      const before = this.lastSeq;
      for (const chunk of page.chunks) {
        if (chunk.seq > untilSeq) break;
        this.sendSeal(chunk, null);
      }
      if (!page.hasMore || this.lastSeq === before) return;
    }
  }

  private async replayOpenBlock(): Promise<void> {
    const snapshot = await this.requestSnapshot();
    const open = snapshot?.open;
    if (!open || this.ended || this.sealedIds.has(open.id)) return;
    // The snapshot's block follows open.lastSeq: deliver everything before it first.
    if (open.lastSeq > this.lastSeq) await this.catchUp(open.lastSeq);
    this.openFromSnapshot(open);
  }

  /** Brings a block we lost track of back from the worker's snapshot, if it is still open. */
  private async resync(id: string): Promise<void> {
    const snapshot = await this.requestSnapshot();
    const open = snapshot?.open;
    if (!open || open.id !== id || this.ended || this.sealedIds.has(id)) {
      if (!this.sealedIds.has(id)) this.unplaceableIds.add(id);
      return;
    }
    this.openFromSnapshot(open);
  }

  /**
   * A block from the worker's snapshot: opened with its text so far, or, when this stream has
   * opened it already, just the characters it has not sent yet.
   */
  private openFromSnapshot(open: NonNullable<OpenBlockSnapshot['open']>): void {
    const tabId = this.options.tabId;
    const sent = this.openBlocks.get(open.id);
    if (sent) {
      // Characters were missed mid-block: send just the ones this stream has not sent.
      if (open.text.length > sent.sentLength) {
        this.send({
          event: 'chunk-delta',
          data: {
            tabId,
            id: open.id,
            offset: sent.sentLength,
            text: open.text.slice(sent.sentLength),
          },
        });
        sent.sentLength = open.text.length;
      }
      return;
    }
    const data: ChunkOpenEvent = {
      tabId,
      id: open.id,
      turnId: open.turnId,
      step: open.step,
      role: open.role,
      type: open.type,
    };
    this.send({ event: 'chunk-open', data });
    this.send({ event: 'chunk-delta', data: { tabId, id: open.id, offset: 0, text: open.text } });
    this.rememberOpen(open.id, open.text.length);
  }

  private rememberOpen(id: string, sentLength: number): void {
    this.openBlocks.set(id, { sentLength });
    if (this.openBlocks.size > OPEN_MEMORY) {
      // The oldest: a block some worker never sealed; its later deltas go back to a snapshot.
      const oldest = this.openBlocks.keys().next().value;
      if (oldest !== undefined) this.openBlocks.delete(oldest);
    }
  }

  private async requestSnapshot(): Promise<OpenBlockSnapshot | null> {
    try {
      const reply = await this.options.bus.request(
        snapshotSubject(this.options.tabId),
        { tabId: this.options.tabId },
        { timeoutMs: this.options.snapshotTimeoutMs },
      );
      const parsed = OpenBlockSnapshotSchema.safeParse(reply);
      return parsed.success ? parsed.data : null;
    } catch {
      // No worker answered (the turn just ended, or its worker died): nothing is open that
      // this stream could replay; the seal, if any, still comes from the store.
      return null;
    }
  }

  private send(event: OutgoingEvent): void {
    if (!this.ended) this.options.sink.send(event);
  }

  private fail(error: unknown): void {
    if (this.ended) return;
    // The tab went away under the stream (deleted between the route's check and a read).
    if (error instanceof NotFoundError) {
      this.end('tab_deleted');
      return;
    }
    this.options.logger.warn({ err: error, tabId: this.options.tabId }, 'stream failed');
    this.end('error');
  }
}
