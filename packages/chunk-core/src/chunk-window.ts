/**
 * The client window (docs/architecture.md, "The client window"): the part of a tab's log a
 * client holds, at chunk grain, fed by live events and pages. Its sealed chunks are one
 * contiguous seq range (eviction trims the old end, pages extend it back, seals forward), so
 * paging by `oldestLoadedSeq()` neither skips nor repeats a chunk.
 */
import { assertNever } from './errors/assert-never';
import { placeDelta } from './exactly-once';
import type { Chunk, ChunkPage, ChunkRole, ChunkType } from './schemas/chunk';
import type { LiveEvent } from './schemas/events';

/** A block still streaming: its text so far, no seq yet. */
export type OpenChunk = {
  open: true;
  id: string;
  turnId: string;
  step: number;
  role: ChunkRole;
  type: ChunkType;
  text: string;
};

/** A chunk as the window holds it: sealed (with its seq) or open. */
export type WindowChunk = (Chunk & { open: false }) | OpenChunk;

/** Consecutive chunks of one turn, role and step, as a view renders them (one bubble). */
export type RenderGroup = {
  /** Stable across renders: the id of the group's first chunk. */
  key: string;
  turnId: string;
  role: ChunkRole;
  step: number;
  chunks: WindowChunk[];
  /** Results of this group's tool calls, by call id (absent while the tool runs). */
  toolResults: Record<string, Chunk & { type: 'tool_result' }>;
  /**
   * The approval request and decision of this group's tool calls that waited for a person, by
   * call id (absent for calls that did not wait). Like results, they join their call's group;
   * one whose call is not held forms a `system` group of its own.
   */
  approvals: Record<string, CallApproval>;
};

/** A tool call's pause for a person: its request, and its decision once made. */
export type CallApproval = {
  request?: Chunk & { type: 'approval_request' };
  decision?: Chunk & { type: 'approval_decision' };
};

/** Options of a window. */
export type ChunkWindowOptions = {
  /** Sealed and open chunks held before the oldest are evicted (live turn and open blocks pinned). */
  limit: number;
};

/** The client-side window over one tab's chunk log. */
export class ChunkWindow {
  /** Sealed chunks in ascending seq, one contiguous range. */
  private sealed: Chunk[] = [];
  private readonly sealedById = new Map<string, Chunk>();
  /** Set when chunks after this seq were offered out of order: the caller should catch up. */
  private gapAfter: number | null = null;
  private readonly openChunks = new Map<string, OpenChunk>();
  private liveTurn: string | null = null;
  private olderExist = true;
  private readonly listeners = new Set<() => void>();
  private changes = 0;
  /** Render groups are derived once per change, not once per render. */
  private groupsCache: { version: number; groups: RenderGroup[] } | null = null;
  readonly limit: number;

  constructor(options: ChunkWindowOptions) {
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new RangeError(`limit must be a positive integer, got ${options.limit}`);
    }
    this.limit = options.limit;
  }

  /** Increments on every change, for cheap change detection in views. */
  get version(): number {
    return this.changes;
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The turn running now, if a `turn-start` was seen and its `turn-done` not yet. */
  liveTurnId(): string | null {
    return this.liveTurn;
  }

  /** The sealed chunks held, ascending by seq. */
  chunks(): readonly Chunk[] {
    return this.sealed;
  }

  /** The blocks streaming now (at most one per turn). */
  openBlocks(): OpenChunk[] {
    return [...this.openChunks.values()];
  }

  /** The sealed chunk with this id or seq, if held. */
  chunk(key: { id: string } | { seq: number }): Chunk | undefined {
    if ('id' in key) return this.sealedById.get(key.id);
    const first = this.sealed[0];
    if (first === undefined) return undefined;
    return this.sealed[key.seq - first.seq];
  }

  /** The lowest seq held, or null when the window is empty. */
  oldestLoadedSeq(): number | null {
    return this.sealed[0]?.seq ?? null;
  }

  /** The highest seq held, or null when the window is empty. */
  newestLoadedSeq(): number | null {
    return this.sealed.at(-1)?.seq ?? null;
  }

  /**
   * The `before` cursor of the next older page, `undefined` for the first (tail) page of an empty
   * window, or null when nothing older exists.
   */
  nextPageBefore(): number | undefined | null {
    if (!this.olderExist) return null;
    return this.oldestLoadedSeq() ?? undefined;
  }

  /**
   * The seq after which chunks are missing (seals arrived beyond a gap and were not taken), or
   * null: resume the stream or fetch an `after` page from there.
   */
  catchUpAfter(): number | null {
    return this.gapAfter;
  }

  /** Applies a live event (docs/architecture.md, "Live events"). */
  applyEvent(event: LiveEvent): void {
    switch (event.event) {
      case 'turn-start':
        this.liveTurn = event.data.turnId;
        break;
      case 'chunk-open': {
        const data = event.data;
        if (this.sealedById.has(data.id) || this.openChunks.has(data.id)) return;
        // A turn streams one block at a time: one of its blocks still open here was dropped by
        // the worker (thinking cut by an interrupting message, a dead worker's block) and will
        // not seal. A seal of it that was only late still arrives and is placed.
        for (const [id, open] of this.openChunks) {
          if (open.turnId === data.turnId) this.openChunks.delete(id);
        }
        this.openChunks.set(data.id, {
          open: true,
          id: data.id,
          turnId: data.turnId,
          step: data.step,
          role: data.role,
          type: data.type,
          text: '',
        });
        // The worker runs one turn at a time: an open block means its turn is live.
        this.liveTurn = data.turnId;
        break;
      }
      case 'chunk-delta': {
        const open = this.openChunks.get(event.data.id);
        if (open === undefined) return;
        const { offset, text } = event.data;
        // Offsets make deltas idempotent: a resent delta (resume sends the whole text at 0)
        // only adds what lies beyond the text held. A gap cannot be filled: the seal will be.
        const placement = placeDelta(open.text.length, offset, text);
        if (placement.kind !== 'fresh') return;
        // Replaced, not mutated: views holding the previous object see a change by reference.
        this.openChunks.set(open.id, { ...open, text: open.text + placement.text });
        break;
      }
      case 'chunk-seal':
        this.openChunks.delete(event.data.chunk.id);
        this.insertSealed([event.data.chunk], 'live');
        this.evict();
        break;
      case 'turn-done':
        if (this.liveTurn === event.data.turnId) this.liveTurn = null;
        // A block still open when its turn ended was dropped by the worker and will not seal.
        for (const [id, open] of this.openChunks) {
          if (open.turnId === event.data.turnId) this.openChunks.delete(id);
        }
        this.evict();
        break;
      case 'approval-requested':
      case 'approval-resolved':
      // The requests and the decisions are chunks too: their seals carry them into the window.
      case 'turn-retry':
        // Nothing the window holds changes; a view that shows retries keeps them itself.
        return;
      default:
        assertNever(event);
    }
    this.changed();
  }

  /**
   * Applies a fetched page. `before` pages (the default: the tail, then older pages) extend the
   * window backwards and say whether older chunks exist; `after` pages catch up forwards.
   */
  applyPage(page: ChunkPage, direction: 'before' | 'after' = 'before'): void {
    this.insertSealed(page.chunks, direction);
    if (direction === 'before') {
      // An empty `before` page answers "nothing older"; otherwise the server says.
      this.olderExist = page.chunks.length > 0 && page.hasMore;
    }
    this.changed();
  }

  /**
   * Evicts the oldest sealed chunks while more than `limit` chunks are held. Eviction may cut a
   * turn in two (the window's first group is then partial), but never touches the live turn or
   * an open block. Returns how many chunks were evicted.
   */
  evict(limit: number = this.limit): number {
    let excess = this.sealed.length + this.openChunks.size - limit;
    let evicted = 0;
    while (excess > 0) {
      const oldest = this.sealed[evicted];
      if (oldest === undefined || oldest.turnId === this.liveTurn) break;
      this.sealedById.delete(oldest.id);
      evicted += 1;
      excess -= 1;
    }
    if (evicted > 0) {
      this.sealed = this.sealed.slice(evicted);
      this.olderExist = true;
      this.changed();
    }
    return evicted;
  }

  /** Empties the window (e.g. when the tab is cleared). */
  clear(): void {
    this.sealed = [];
    this.sealedById.clear();
    this.gapAfter = null;
    this.openChunks.clear();
    this.liveTurn = null;
    this.olderExist = true;
    this.changed();
  }

  /**
   * The window as render groups: consecutive chunks of one turn, role and step form a group;
   * tool results join the group of their call (a result whose call was evicted or not yet paged
   * in forms a `tool` group of its own); open blocks come last. The same array is returned until
   * the window changes, so views can compare by reference.
   */
  renderGroups(): RenderGroup[] {
    if (this.groupsCache?.version === this.changes) return this.groupsCache.groups;
    const groups = this.deriveGroups();
    this.groupsCache = { version: this.changes, groups };
    return groups;
  }

  private deriveGroups(): RenderGroup[] {
    const groups: RenderGroup[] = [];
    const callGroups = new Map<string, RenderGroup>();
    const items: WindowChunk[] = [
      ...this.sealed.map((chunk) => ({ ...chunk, open: false as const })),
      ...this.openChunks.values(),
    ];
    for (const item of items) {
      if (!item.open && item.type === 'tool_result') {
        const owner = callGroups.get(item.data.callId);
        if (owner !== undefined && owner.toolResults[item.data.callId] === undefined) {
          owner.toolResults[item.data.callId] = item;
          continue;
        }
      }
      if (!item.open && (item.type === 'approval_request' || item.type === 'approval_decision')) {
        const owner = callGroups.get(item.data.callId);
        if (owner !== undefined) {
          const held = owner.approvals[item.data.callId] ?? {};
          owner.approvals[item.data.callId] =
            item.type === 'approval_request'
              ? { ...held, request: item }
              : { ...held, decision: item };
          continue;
        }
      }
      let group = groups.at(-1);
      if (
        group === undefined ||
        group.turnId !== item.turnId ||
        group.role !== item.role ||
        group.step !== item.step
      ) {
        group = {
          key: item.id,
          turnId: item.turnId,
          role: item.role,
          step: item.step,
          chunks: [],
          toolResults: {},
          approvals: {},
        };
        groups.push(group);
      }
      group.chunks.push(item);
      if (!item.open && item.type === 'tool_call') callGroups.set(item.data.callId, group);
    }
    return groups;
  }

  /**
   * Adds sealed chunks, keeping one contiguous seq range: chunks already held are skipped, and
   * chunks that would leave a hole are not taken; a hole after the newest chunk (events missed
   * while disconnected) is reported by `catchUpAfter()` so the caller resumes from there.
   */
  private insertSealed(chunks: readonly Chunk[], source: 'before' | 'after' | 'live'): void {
    const incoming = chunks
      .filter((chunk) => !this.sealedById.has(chunk.id))
      .sort((a, b) => a.seq - b.seq);
    if (incoming.length === 0) return;
    const oldest = this.oldestLoadedSeq();
    const newest = this.newestLoadedSeq();
    let older: Chunk[] = [];
    let newer: Chunk[] = [];
    if (oldest === null || newest === null) {
      newer = contiguousRun(incoming, source === 'before' ? 'newest' : 'oldest');
      if (source !== 'before' && newer.length < incoming.length) {
        this.gapAfter = newer.at(-1)?.seq ?? null;
      }
    } else {
      const olderRun = contiguousRun(
        incoming.filter((chunk) => chunk.seq < oldest),
        'newest',
      );
      if (olderRun.at(-1)?.seq === oldest - 1) older = olderRun;
      const newerCandidates = incoming.filter((chunk) => chunk.seq > newest);
      const newerRun = contiguousRun(newerCandidates, 'oldest');
      if (newerRun[0]?.seq === newest + 1) newer = newerRun;
      if (newer.length < newerCandidates.length) this.gapAfter = newest + newer.length;
    }
    if (newer.length > 0 && this.gapAfter !== null && (newer.at(-1)?.seq ?? 0) > this.gapAfter) {
      this.gapAfter = null;
    }
    this.sealed =
      older.length === 0 && newer.length === 0 ? this.sealed : [...older, ...this.sealed, ...newer];
    for (const chunk of [...older, ...newer]) this.sealedById.set(chunk.id, chunk);
  }

  private changed(): void {
    this.changes += 1;
    for (const listener of this.listeners) listener();
  }
}

/**
 * The longest gap-free run of `chunks` (sorted, unique ids) anchored at their newest or oldest
 * end: a page is gap-free by contract, so this only trims what would break contiguity.
 */
function contiguousRun(chunks: Chunk[], anchor: 'newest' | 'oldest'): Chunk[] {
  const unique = chunks.filter(
    (chunk, index) => index === 0 || chunks[index - 1]?.seq !== chunk.seq,
  );
  if (anchor === 'oldest') {
    let end = 1;
    while (end < unique.length && unique[end]?.seq === (unique[end - 1]?.seq ?? 0) + 1) end += 1;
    return unique.slice(0, end);
  }
  let start = unique.length - 1;
  while (start > 0 && unique[start - 1]?.seq === (unique[start]?.seq ?? 0) - 1) start -= 1;
  return unique.slice(Math.max(start, 0));
}
