/**
 * Everything one client received from a tab's stream across any number of connections, checked
 * against the resume contract (docs/architecture.md, "Streams and resume") as it arrives: each seq exactly once and in
 * order, and within a connection each block's characters exactly once (offsets contiguous). A
 * new connection may replay an open block from offset 0 (the snapshot), which must agree with
 * what the client already had.
 */
import {
  type ApprovalRequestedEvent,
  ApprovalRequestedEventSchema,
  type ApprovalResolvedEvent,
  ApprovalResolvedEventSchema,
  type Chunk,
  ChunkDeltaEventSchema,
  ChunkOpenEventSchema,
  ChunkSealEventSchema,
  type StreamLiveEvent,
  StreamLiveEventSchema,
  type TurnDoneEvent,
  TurnDoneEventSchema,
  type TurnRetryEvent,
  TurnRetryEventSchema,
  TurnStartEventSchema,
} from '@chunklog/chunk-core';

interface BlockText {
  /** The block's text as the client has reassembled it. */
  text: string;
  /** The stored text, once its seal arrived. */
  sealedText: string | null;
}

export class StreamLedger {
  /** Sealed chunks in arrival order. */
  readonly seals: Chunk[] = [];
  readonly turnsDone: TurnDoneEvent[] = [];
  readonly turnsStarted: string[] = [];
  /** Retries of failed model calls, as announced (live only: none is replayed on resume). */
  readonly turnRetries: TurnRetryEvent[] = [];
  readonly approvalsRequested: ApprovalRequestedEvent[] = [];
  readonly approvalsResolved: ApprovalResolvedEvent[] = [];
  /** Contract breaches, with enough context to see what happened; empty when all is well. */
  readonly violations: string[] = [];
  readonly streamEnds: unknown[] = [];
  /** The `stream-live` event of each connection that went live, in order. */
  readonly streamLives: StreamLiveEvent[] = [];
  connections = 0;
  /** Connections that ended while a block was open in them (resumes mid-block). */
  midBlockDisconnects = 0;
  deltasReceived = 0;

  private readonly blocks = new Map<string, BlockText>();
  /** Per block opened in the current connection: characters this connection delivered. */
  private current = new Map<string, number>();
  /** The current connection has sent its `stream-live`. */
  private liveInConnection = false;
  private readonly waiters = new Set<() => void>();

  get lastSeq(): number {
    return this.seals.at(-1)?.seq ?? 0;
  }

  /** The reassembled text of every block the client saw open or delta events for. */
  blockTexts(): Map<string, BlockText> {
    return this.blocks;
  }

  /** A connection opened: the blocks it has opened start empty. */
  startConnection(): void {
    this.connections += 1;
    this.current = new Map();
    this.liveInConnection = false;
  }

  /** The client is about to drop the connection. */
  endConnection(): void {
    for (const id of this.current.keys()) {
      if (this.blocks.get(id)?.sealedText === null) {
        this.midBlockDisconnects += 1;
        return;
      }
    }
  }

  receive(event: string, data: unknown, id: string | undefined): void {
    try {
      this.apply(event, data, id);
    } catch (error) {
      this.violations.push(`${event}: ${(error as Error).message}`);
    }
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once the predicate holds over the ledger (checked now and after each event). */
  waitUntil(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what} (last seq ${this.lastSeq}, ` +
              `${this.turnsDone.length} turns done, violations: ${this.violations.join('; ') || 'none'})`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  private apply(event: string, data: unknown, id: string | undefined): void {
    switch (event) {
      case 'chunk-seal': {
        const { chunk } = ChunkSealEventSchema.parse(data);
        if (chunk.seq !== this.lastSeq + 1) {
          throw new Error(`seq ${chunk.seq} arrived after seq ${this.lastSeq}`);
        }
        if (id !== String(chunk.seq)) throw new Error(`seal of seq ${chunk.seq} has id ${id}`);
        this.seals.push(chunk);
        const block = this.blocks.get(chunk.id);
        if (block) {
          const stored = 'text' in chunk.data ? String(chunk.data.text) : '';
          block.sealedText = stored;
          // Opened in this very connection: every character must have arrived before the seal.
          if (this.current.has(chunk.id) && block.text !== stored) {
            throw new Error(
              `block ${chunk.id} sealed with ${stored.length} characters, client had ${block.text.length}`,
            );
          }
          if (!stored.startsWith(block.text)) {
            throw new Error(`block ${chunk.id}: received text is not a prefix of the stored text`);
          }
        }
        this.current.delete(chunk.id);
        return;
      }
      case 'chunk-open': {
        const open = ChunkOpenEventSchema.parse(data);
        if (this.seals.some((chunk) => chunk.id === open.id)) {
          throw new Error(`block ${open.id} opened after its seal`);
        }
        if (this.current.has(open.id)) throw new Error(`block ${open.id} opened twice`);
        this.current.set(open.id, 0);
        if (!this.blocks.has(open.id)) this.blocks.set(open.id, { text: '', sealedText: null });
        return;
      }
      case 'chunk-delta': {
        const delta = ChunkDeltaEventSchema.parse(data);
        this.deltasReceived += 1;
        const delivered = this.current.get(delta.id);
        const block = this.blocks.get(delta.id);
        if (delivered === undefined || !block) {
          throw new Error(`delta of block ${delta.id} without its open in this connection`);
        }
        if (delta.offset !== delivered) {
          throw new Error(
            `delta of block ${delta.id} at offset ${delta.offset}, this connection had delivered ${delivered}`,
          );
        }
        // A replay from offset 0 on a new connection must agree with what arrived before.
        const overlap = block.text.slice(delta.offset);
        if (!overlap.startsWith(delta.text) && !delta.text.startsWith(overlap)) {
          throw new Error(`delta of block ${delta.id} at ${delta.offset} contradicts earlier text`);
        }
        const replaced = block.text.slice(0, delta.offset) + delta.text;
        if (replaced.length >= block.text.length) block.text = replaced;
        this.current.set(delta.id, delivered + delta.text.length);
        return;
      }
      case 'turn-start':
        this.turnsStarted.push(TurnStartEventSchema.parse(data).turnId);
        return;
      case 'turn-retry':
        this.turnRetries.push(TurnRetryEventSchema.parse(data));
        return;
      case 'turn-done':
        this.turnsDone.push(TurnDoneEventSchema.parse(data));
        return;
      case 'approval-requested':
        this.approvalsRequested.push(ApprovalRequestedEventSchema.parse(data));
        return;
      case 'approval-resolved':
        this.approvalsResolved.push(ApprovalResolvedEventSchema.parse(data));
        return;
      case 'stream-live': {
        const live = StreamLiveEventSchema.parse(data);
        if (this.liveInConnection) throw new Error('a second stream-live in one connection');
        this.liveInConnection = true;
        // Catch-up is over: the stream has delivered everything up to `after`, and no more.
        if (live.after !== this.lastSeq) {
          throw new Error(`stream-live after ${live.after}, the client had seq ${this.lastSeq}`);
        }
        if ((live.status === 'running') !== (live.activeTurnId !== null)) {
          throw new Error(`stream-live status ${live.status} with turn ${live.activeTurnId}`);
        }
        this.streamLives.push(live);
        return;
      }
      case 'stream-end':
        this.streamEnds.push(data);
        return;
      default:
        throw new Error(`unknown event ${event}`);
    }
  }
}
