import {
  type LiveEvent,
  placeDelta,
  placeSeal,
  type StreamEndEvent,
  type StreamLiveEvent,
} from '@chunklog/chunk-core';

/** Every event a tab stream yields: the live events and the gateway's own two. */
export type StreamEvent =
  | LiveEvent
  | { event: 'stream-live'; data: StreamLiveEvent }
  | { event: 'stream-end'; data: StreamEndEvent };

/** The verdict on one incoming event: deliver this (maybe trimmed) event, drop it, or resume. */
export type FilterVerdict = StreamEvent | null | 'gap';

/**
 * What makes a resumed stream exactly-once: it remembers the last seq delivered and how much
 * of each open block's text was, drops seals it delivered already and trims resent text, and
 * asks for a resume (`gap`) when something would be skipped.
 */
export class ResumeFilter {
  private openBlocks = new Map<string, { turnId: string; length: number }>();
  private live = false;

  constructor(
    /** The last seq delivered. */
    public lastSeq: number,
  ) {}

  /** A new connection begins: its catch-up comes before its `stream-live`. */
  connected(): void {
    this.live = false;
  }

  filter(event: StreamEvent): FilterVerdict {
    switch (event.event) {
      case 'chunk-seal': {
        const { seq, id } = event.data.chunk;
        const placement = placeSeal(this.lastSeq, seq);
        if (placement === 'duplicate') return null;
        // The catch-up is read from the store, which holds every seq there is (a cleared tab
        // starts above 1); a live seal beyond the next seq means seals were missed.
        if (this.live && placement === 'gap') return 'gap';
        this.lastSeq = seq;
        this.openBlocks.delete(id);
        return event;
      }
      case 'chunk-open': {
        const { id, turnId } = event.data;
        // A resume announces the open block again: it was delivered once already.
        if (this.openBlocks.has(id)) return null;
        this.openBlocks.set(id, { turnId, length: 0 });
        return event;
      }
      case 'chunk-delta': {
        const { id, offset, text } = event.data;
        const block = this.openBlocks.get(id);
        if (block === undefined) return null;
        const placement = placeDelta(block.length, offset, text);
        if (placement.kind === 'gap') return 'gap';
        if (placement.kind === 'duplicate') return null;
        block.length = offset + text.length;
        if (placement.whole) return event;
        return {
          event: 'chunk-delta',
          data: { ...event.data, offset: placement.offset, text: placement.text },
        };
      }
      case 'turn-done':
        this.forgetBlocks((turnId) => turnId === event.data.turnId);
        return event;
      case 'stream-live':
        this.live = true;
        // Blocks of a turn that is no longer running were dropped (a crashed worker's).
        this.forgetBlocks((turnId) => turnId !== event.data.activeTurnId);
        return event;
      default:
        return event;
    }
  }

  /** Ids of the blocks delivered open and not yet sealed or dropped. */
  openBlockIds(): string[] {
    return [...this.openBlocks.keys()];
  }

  private forgetBlocks(matches: (turnId: string) => boolean): void {
    for (const [id, block] of this.openBlocks) {
      if (matches(block.turnId)) this.openBlocks.delete(id);
    }
  }
}
