import type { Bus } from '@chunklog/bus';
import {
  type Chunk,
  type ChunkDraft,
  ConflictError,
  type FoldOptions,
  type LiveEvent,
  liveEventSubject,
  MessageFold,
  type NewChunk,
  type OpenBlockSnapshot,
} from '@chunklog/chunk-core';
import type { Logger } from 'pino';
import { secondsSince, type WorkerMetrics } from '../metrics/worker-metrics';
import { type HeldTab, type HeldTabStore, LeaseLostError } from './held-tab';

/** The block being streamed: it lives only in memory until it seals (write-on-seal). */
export interface OpenBlock {
  id: string;
  turnId: string;
  step: number;
  role: 'assistant';
  type: 'text' | 'thinking';
  text: string;
}

/**
 * What a worker knows about a tab while it holds the tab's lease: the log (kept in memory for
 * the turn), the seq it must write next, the open block, and the live-event publisher.
 * Appends are serialized and fenced: each passes the expected seq, so a worker whose lease was
 * taken over gets a conflict instead of writing into the new holder's turn.
 */
export class TabSession {
  readonly log: Chunk[];
  /**
   * The log folded into request messages as it grows, so each step's request costs the new
   * chunks, not the whole log (chunk-core proves incremental = full build).
   */
  readonly fold: MessageFold;
  open: OpenBlock | null = null;
  readonly tabId: string;
  /** The held tab's store handle: its calls wait out an outage (see HeldTab). */
  readonly store: HeldTabStore;
  private lastSeq: number;
  private appending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly held: HeldTab,
    log: Chunk[],
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly metrics?: WorkerMetrics,
    foldOptions: FoldOptions = {},
  ) {
    this.tabId = held.tabId;
    this.store = held.store;
    this.log = log;
    this.fold = new MessageFold(foldOptions).appendAll(log);
    this.lastSeq = log.at(-1)?.seq ?? 0;
  }

  /** Appends chunks (one transaction, contiguous seqs) and publishes their seals after commit. */
  append(bodies: readonly ChunkDraft[]): Promise<Chunk[]> {
    const run = async (): Promise<Chunk[]> => {
      if (this.lost) throw new LeaseLostError(this.tabId);
      const chunks: NewChunk[] = bodies.map((body) => ({ ...body, tabId: this.tabId }) as NewChunk);
      let stored: Chunk[];
      const startedAt = performance.now();
      try {
        stored = await this.store.append(this.tabId, chunks, { expectedSeq: this.lastSeq + 1 });
      } catch (error) {
        if (error instanceof ConflictError) {
          this.markLost(error);
          throw new LeaseLostError(this.tabId, { cause: error });
        }
        throw error;
      } finally {
        // Failed appends are timed too: a slow database shows whether or not it commits.
        this.metrics?.appendSeconds.observe(secondsSince(startedAt));
      }
      let added = 0;
      for (const chunk of stored) {
        if (chunk.seq > this.lastSeq) {
          this.lastSeq = chunk.seq;
          this.log.push(chunk);
          this.fold.append(chunk);
          added++;
        }
      }
      // Only new rows: an id already stored comes back from the idempotent append unchanged.
      this.metrics?.chunksAppended.inc(added);
      // Seals go out only now, after the commit (docs/architecture.md, "Live events").
      for (const chunk of stored) {
        await this.publish({ event: 'chunk-seal', data: { tabId: this.tabId, chunk } });
      }
      return stored;
    };
    const result = this.appending.then(run, run);
    this.appending = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every append queued so far has finished (or failed). */
  settled(): Promise<void> {
    return this.appending.then(() => undefined);
  }

  /** True once the lease is known to be another worker's: nothing more is written. */
  /** The lease owner: this worker. */
  get owner(): string {
    return this.held.owner;
  }

  get lost(): boolean {
    return this.held.lost;
  }

  /** Aborted on lease loss; turns derive their own controllers from it. */
  get lifetime(): AbortController {
    return this.held.lifetime;
  }

  markLost(cause?: unknown): void {
    this.held.markLost(cause);
  }

  /** Publishes a live event; a lost event is recovered by clients from Postgres, so failures only log. */
  async publish(event: LiveEvent): Promise<void> {
    try {
      await this.bus.publish(liveEventSubject(this.tabId, event.event), event.data);
    } catch (error) {
      this.logger.warn(
        { err: error, tabId: this.tabId, event: event.event },
        'live event not published',
      );
    }
  }

  /** The open block for a client resuming mid-block (answered on snapshotSubject). */
  snapshot(): OpenBlockSnapshot {
    const open = this.open;
    if (!open) return { open: null };
    return {
      open: {
        id: open.id,
        turnId: open.turnId,
        step: open.step,
        role: open.role,
        type: open.type,
        text: open.text,
        lastSeq: this.lastSeq,
      },
    };
  }
}
