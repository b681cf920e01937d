import {
  type Chunk,
  ChunkWindow,
  emptyUsage,
  type OpenChunk,
  type RenderGroup,
  type TabStatus,
  type TurnDoneReason,
  type TurnRetryEvent,
} from '@chunklog/chunk-core';
import { backoffDelay, sleep } from './backoff';
import type { ChunklogClient } from './client';
import { type ChunklogError, toChunklogError } from './errors';
import type { StreamEvent } from './resume-filter';
import type { StreamState, TabStream, TabStreamOptions } from './tab-stream';
import { type WaitingCallView, waitingCalls } from './waiting-calls';

export interface TabViewOptions {
  /** Chunks held before the oldest are evicted; the live turn and open blocks stay (default 500). */
  limit?: number;
  /** Chunks per page fetched (the first one and each `loadOlder`; default 100, at most 500). */
  pageSize?: number;
  /** Options of the underlying stream (transport, ticket, backoff); `after` is the view's. */
  stream?: Omit<TabStreamOptions, 'after'>;
  /**
   * Keep the limit while scrolling back too (default false): when `loadOlder()` takes the window
   * past its limit, the newest chunks go instead and the view stops following the live end
   * (`following: false`); `loadNewer()` pages forward again and follows live once it reaches
   * the end. Without it, older pages stay until the next live seal or `trim()`.
   */
  evictNewer?: boolean;
}

/** What a view shows: one immutable object per change, the same object until the next one. */
export interface TabViewSnapshot {
  readonly tabId: string;
  /** The window as render groups (bubbles): sealed chunks in seq order, open blocks last. */
  readonly groups: readonly RenderGroup[];
  /** The sealed chunks held, ascending by seq. */
  readonly chunks: readonly Chunk[];
  /** The blocks streaming now, their text so far. */
  readonly openBlocks: readonly OpenChunk[];
  /** The turn running now, as far as the stream has told. */
  readonly liveTurnId: string | null;
  /**
   * The running turn's model call failed and waits to be retried: which retry of how many, the
   * wait and a short reason (a `turn-retry` event), so a UI can say "Retrying (1 of 4)…". Null
   * again as soon as the turn goes on (a block opens or seals) or ends.
   */
  readonly retry: TurnRetryEvent | null;
  /**
   * The tab's status, once the stream is live (null before): `running`, `idle`, or `waiting`
   * (a turn paused until a person decides on `waiting`).
   */
  readonly status: TabStatus | null;
  /**
   * The tool calls held in the window that wait for a person's decision (an `approval_request`
   * chunk with neither an `approval_decision` nor a `tool_result`), in the order the model made
   * them; empty when none. Decide with `client.approve` / `client.deny`; the calls leave this
   * list when the resumed turn seals their decisions.
   */
  readonly waiting: readonly WaitingCallView[];
  /** True until the first page arrived. */
  readonly loading: boolean;
  /** True when older chunks exist than the oldest held: `loadOlder()` fetches them. */
  readonly hasOlder: boolean;
  readonly loadingOlder: boolean;
  /**
   * True while the window holds the live end of the tab (seals and open blocks arrive live).
   * False after `evictNewer` dropped the newest chunks: `loadNewer()` fetches them.
   */
  readonly following: boolean;
  /** True when newer chunks exist than the newest held (`!following`). */
  readonly hasNewer: boolean;
  readonly loadingNewer: boolean;
  /** The stream's connection state. */
  readonly connection: StreamState;
  /** The last error that stopped the view or a page load; null when all is well. */
  readonly error: ChunklogError | null;
}

/**
 * A tab as a UI shows it: chunk-core's `ChunkWindow` fed by the tail page, older pages and the
 * live stream, evicting its oldest chunks beyond `limit` (never the live turn or an open block).
 * `subscribe` / `getSnapshot` follow the external-store contract, so React's
 * `useSyncExternalStore`, a Svelte store (`subscribe` that calls back at once) and plain JS bind
 * to it directly. The first subscriber starts it; `close()` stops it.
 */
export class TabView {
  private current: ChunkWindow;
  private unsubscribeWindow: () => void;
  private readonly limit: number;
  private readonly pageSize: number;
  private readonly listeners = new Set<() => void>();
  private stream: TabStream | null = null;
  private started = false;
  private closed = false;
  private readonly closing = new AbortController();
  private loading = true;
  private loadingOlder: Promise<boolean> | null = null;
  private loadingNewer: Promise<boolean> | null = null;
  private following = true;
  /** While not following: the running turn, as the stream tells it. */
  private detachedLiveTurn: string | null = null;
  private status: TabStatus | null = null;
  private retry: TurnRetryEvent | null = null;
  private error: ChunklogError | null = null;
  private version = 0;
  private snapshot: { version: number; value: TabViewSnapshot } | null = null;

  constructor(
    private readonly client: ChunklogClient,
    readonly tabId: string,
    private readonly options: TabViewOptions = {},
  ) {
    this.current = new ChunkWindow({ limit: options.limit ?? 500 });
    this.limit = this.current.limit;
    this.pageSize = Math.min(options.pageSize ?? 100, 500, this.limit);
    this.unsubscribeWindow = this.current.subscribe(() => this.changed());
  }

  /** The window itself, for views that read more than the snapshot carries. */
  get window(): ChunkWindow {
    return this.current;
  }

  /**
   * The running turn, as the snapshot has it, without building a snapshot: cheap enough to read
   * on every change (a listener that must see a turn start and end however fast they follow
   * each other, where the snapshot is read once per frame).
   */
  get liveTurnId(): string | null {
    return this.following ? this.window.liveTurnId() : this.detachedLiveTurn;
  }

  /**
   * Calls `listener` after every change; returns the unsubscribe. The first subscriber starts
   * the view. (Svelte's store contract also wants the value at once: use `toStore()`.)
   */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    void this.start();
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** The current snapshot; the same object until something changes. */
  getSnapshot = (): TabViewSnapshot => {
    if (this.snapshot?.version === this.version) return this.snapshot.value;
    const value: TabViewSnapshot = Object.freeze({
      tabId: this.tabId,
      groups: this.window.renderGroups(),
      chunks: this.window.chunks(),
      openBlocks: this.window.openBlocks(),
      liveTurnId: this.liveTurnId,
      retry: this.retry,
      status: this.status,
      waiting: waitingCalls(this.window.chunks()),
      loading: this.loading,
      hasOlder: this.window.nextPageBefore() !== null,
      loadingOlder: this.loadingOlder !== null,
      following: this.following,
      hasNewer: !this.following,
      loadingNewer: this.loadingNewer !== null,
      connection: this.stream?.state ?? 'idle',
      error: this.error,
    });
    this.snapshot = { version: this.version, value };
    return value;
  };

  /** A Svelte store: `subscribe(run)` calls `run` with the snapshot now and on every change. */
  toStore(): { subscribe(run: (snapshot: TabViewSnapshot) => void): () => void } {
    return {
      subscribe: (run) => {
        run(this.getSnapshot());
        return this.subscribe(() => run(this.getSnapshot()));
      },
    };
  }

  /**
   * Loads the tail page and opens the stream after it; resolves once the page is shown. A tail
   * page that fails to load for a reason that may pass (no answer, 429, 5xx) is tried again
   * with the stream's backoff, its error shown in the snapshot meanwhile.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (let failures = 1; !this.closed; failures += 1) {
      try {
        const page = await this.client.chunks(this.tabId, { limit: this.pageSize });
        if (this.closed) return;
        this.window.applyPage(page);
        this.error = null;
        break;
      } catch (error) {
        const failure = toChunklogError(error);
        if (!failure.retryable) this.loading = false;
        this.fail(failure);
        if (!failure.retryable) return;
        await sleep(
          failure.retryAfterMs ?? backoffDelay(failures, this.options.stream?.backoff),
          this.closing.signal,
        );
      }
    }
    this.loading = false;
    this.changed();
    if (!this.closed) this.follow();
  }

  /** Streams live events into the window from its newest chunk on. */
  private follow(): void {
    // The stream replaced is let go quietly: its end is no news to the view.
    this.stopStream();
    this.following = true;
    const stream = this.client.stream(this.tabId, {
      ...this.options.stream,
      after: this.window.newestLoadedSeq() ?? 0,
    });
    this.stream = stream;
    const listeners = [
      stream.on('state', () => this.changed()),
      stream.on('end', (error) => {
        if (error) this.fail(error);
      }),
      stream.on('event', (event) => this.apply(event)),
    ];
    this.stopStream = () => {
      for (const off of listeners) off();
      stream.close();
    };
  }

  private stopStream: () => void = () => {};

  /**
   * Fetches the page before the oldest chunk held. Resolves true when still older chunks exist.
   * Concurrent calls share one fetch. Pages loaded this way are kept until the next live seal
   * or `trim()` evicts beyond the limit again, or, with `evictNewer`, push the newest chunks out
   * at once.
   */
  loadOlder(): Promise<boolean> {
    if (this.loadingOlder !== null) return this.loadingOlder;
    const before = this.window.nextPageBefore();
    if (before === null) return Promise.resolve(false);
    const load = (async () => {
      try {
        const page = await this.client.chunks(this.tabId, {
          limit: this.pageSize,
          ...(before === undefined ? {} : { before }),
        });
        if (!this.closed) this.window.applyPage(page);
        this.error = null;
        if (this.options.evictNewer && this.window.chunks().length > this.limit) this.detach();
      } catch (error) {
        this.error = toChunklogError(error);
      } finally {
        this.loadingOlder = null;
        this.changed();
      }
      return this.window.nextPageBefore() !== null;
    })();
    this.loadingOlder = load;
    this.changed();
    return load;
  }

  /**
   * Fetches the page after the newest chunk held, evicting the oldest beyond the limit; at the
   * end of the log the view follows live again. Resolves true while still newer chunks exist.
   */
  loadNewer(): Promise<boolean> {
    if (this.following) return Promise.resolve(false);
    if (this.loadingNewer !== null) return this.loadingNewer;
    const after = this.window.newestLoadedSeq() ?? 0;
    const load = (async () => {
      try {
        const page = await this.client.chunks(this.tabId, { after, limit: this.pageSize });
        if (this.closed) return false;
        this.window.applyPage(page, 'after');
        this.error = null;
        this.window.evict();
        if (!page.hasMore) this.follow();
      } catch (error) {
        this.error = toChunklogError(error);
      } finally {
        this.loadingNewer = null;
        this.changed();
      }
      return !this.following;
    })();
    this.loadingNewer = load;
    this.changed();
    return load;
  }

  /** Evicts the oldest chunks beyond the limit now (e.g. once the user is back at the end). */
  trim(): number {
    return this.window.evict();
  }

  /**
   * Keeps the oldest `limit` chunks in a fresh window (ChunkWindow evicts only at its old end)
   * and stops applying live chunks: they would not join the range held.
   */
  private detach(): void {
    const kept = this.window.chunks().slice(0, this.limit);
    const olderExist = this.window.nextPageBefore() !== null;
    if (this.following) this.detachedLiveTurn = this.window.liveTurnId();
    this.following = false;
    this.unsubscribeWindow();
    this.current = new ChunkWindow({ limit: this.limit });
    this.current.applyPage({ chunks: kept, total: kept.length, hasMore: olderExist });
    this.unsubscribeWindow = this.current.subscribe(() => this.changed());
  }

  /** Stops the stream; the snapshot stays readable. */
  close(): void {
    this.closed = true;
    this.closing.abort();
    this.stream?.close();
  }

  private apply(event: StreamEvent): void {
    if (this.noteRetry(event) && event.event === 'turn-retry') {
      // The window holds nothing of it: the view alone changed.
      this.changed();
      return;
    }
    if (!this.following) {
      this.track(event);
      return;
    }
    switch (event.event) {
      case 'stream-live': {
        this.status = event.data.status;
        const held = this.window.liveTurnId();
        const active = event.data.activeTurnId;
        // turn-start and turn-done are live only: one that passed while the stream was away (or
        // before the view opened) is taken from the tab's status, so the window pins the right
        // turn. The usage of a missed turn-done is unknown here; the window does not keep it.
        if (held !== null && held !== active) {
          this.window.applyEvent({
            event: 'turn-done',
            data: { tabId: this.tabId, turnId: held, reason: 'completed', usage: emptyUsage() },
          });
        }
        if (active !== null && held !== active) {
          this.window.applyEvent({
            event: 'turn-start',
            data: { tabId: this.tabId, turnId: active },
          });
        }
        this.changed();
        return;
      }
      case 'stream-end':
        return;
      case 'turn-start':
        this.status = 'running';
        break;
      case 'turn-done':
        this.status = statusAfter(event.data.reason);
        break;
      case 'approval-requested':
        this.status = 'waiting';
        this.changed();
        break;
    }
    this.window.applyEvent(event);
  }

  /** While not following: the tab's status and running turn only; chunks wait for loadNewer. */
  private track(event: StreamEvent): void {
    if (event.event === 'stream-live') {
      this.status = event.data.status;
      this.detachedLiveTurn = event.data.activeTurnId;
    } else if (event.event === 'turn-start') {
      this.status = 'running';
      this.detachedLiveTurn = event.data.turnId;
    } else if (event.event === 'turn-done') {
      this.status = statusAfter(event.data.reason);
      if (this.detachedLiveTurn === event.data.turnId) this.detachedLiveTurn = null;
    } else if (event.event === 'approval-requested') {
      this.status = 'waiting';
    } else {
      return;
    }
    this.changed();
  }

  /**
   * Keeps the retry the running turn waits for: set by `turn-retry`, cleared by whatever the
   * turn does next (a block opens or seals) or by its end. True when it changed.
   */
  private noteRetry(event: StreamEvent): boolean {
    const before = this.retry;
    if (event.event === 'turn-retry') {
      this.retry = event.data;
    } else if (before === null) {
      return false;
    } else if (event.event === 'chunk-open' || event.event === 'turn-done') {
      if (event.data.turnId === before.turnId) this.retry = null;
    } else if (event.event === 'chunk-seal') {
      if (event.data.chunk.turnId === before.turnId) this.retry = null;
    } else if (event.event === 'turn-start') {
      if (event.data.turnId !== before.turnId) this.retry = null;
    } else if (event.event === 'stream-live') {
      // Reconnected after the turn ended, or while another runs: that wait is over.
      if (event.data.activeTurnId !== before.turnId) this.retry = null;
    }
    return this.retry !== before;
  }

  private fail(error: unknown): void {
    this.error = toChunklogError(error);
    this.changed();
  }

  private changed(): void {
    this.version += 1;
    for (const listener of [...this.listeners]) listener();
  }
}

/** A run that ended to wait for a person leaves the tab waiting; any other end, idle. */
function statusAfter(reason: TurnDoneReason): TabStatus {
  return reason === 'awaiting_approval' ? 'waiting' : 'idle';
}
