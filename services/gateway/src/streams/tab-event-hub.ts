import type { Bus, Subscription } from '@chunklog/bus';
import {
  type LiveEvent,
  LiveEventSchema,
  NotFoundError,
  tabEventsSubject,
} from '@chunklog/chunk-core';
import { type DeferredSpan, startDeferredSpan } from '@chunklog/runtime';
import type { TabStore } from '@chunklog/store';
import type { FastifyBaseLogger } from 'fastify';

/** A validated live event, with its JSON encoded once however many clients receive it. */
export interface HubEvent {
  live: LiveEvent;
  /** JSON of the event's data, computed on first use and shared. */
  dataJson(): string;
}

/** A stream joined to a tab's live events. */
export interface HubListener {
  event(event: HubEvent): void;
  /** The store holds seals up to `seq` that never arrived live (lost while the bus was down). */
  storeAhead(seq: number): void;
  /** The tab was deleted: nothing more will come. */
  tabDeleted(): void;
}

interface TabEntry {
  listeners: Set<HubListener>;
  subscription: Promise<Subscription>;
  /** Highest seq seen in a live seal (or caught up to through reconcile). */
  seenSeq: number;
  /** A store tail seen ahead of seenSeq at the last reconcile, still unconfirmed. */
  suspectSeq: number | null;
}

/**
 * One bus subscription per tab however many clients stream it: a thousand viewers of a tab
 * cost one NATS subscription and one zod parse per event, not a thousand.
 */
export class TabEventHub {
  private readonly tabs = new Map<string, TabEntry>();

  constructor(
    private readonly bus: Bus,
    private readonly logger: FastifyBaseLogger,
    /** Told, per live seal, the seconds from its commit to its arrival here. */
    private readonly onSealDelay?: (seconds: number) => void,
  ) {}

  /** Starts delivering the tab's live events to the listener; resolves once subscribed. */
  async join(tabId: string, listener: HubListener): Promise<() => void> {
    let entry = this.tabs.get(tabId);
    if (!entry) {
      const listeners = new Set<HubListener>();
      let created: TabEntry | undefined;
      const subscription = this.bus.subscribe(tabEventsSubject(tabId), (payload, subject) => {
        if (created) this.dispatch(created, payload, subject);
      });
      created = { listeners, subscription, seenSeq: 0, suspectSeq: null };
      entry = created;
      this.tabs.set(tabId, entry);
      subscription.catch(() => {
        if (this.tabs.get(tabId) === entry) this.tabs.delete(tabId);
      });
    }
    entry.listeners.add(listener);
    const joined = entry;
    try {
      await joined.subscription;
    } catch (error) {
      joined.listeners.delete(listener);
      throw error;
    }
    return () => this.leave(tabId, joined, listener);
  }

  /** Number of tabs with a live subscription (for tests and metrics). */
  get tabCount(): number {
    return this.tabs.size;
  }

  async close(): Promise<void> {
    const entries = [...this.tabs.values()];
    this.tabs.clear();
    await Promise.allSettled(entries.map(async (entry) => (await entry.subscription).stop()));
  }

  private leave(tabId: string, entry: TabEntry, listener: HubListener): void {
    entry.listeners.delete(listener);
    if (entry.listeners.size > 0 || this.tabs.get(tabId) !== entry) return;
    this.tabs.delete(tabId);
    entry.subscription
      .then((subscription) => subscription.stop())
      .catch((error) => this.logger.warn({ err: error, tabId }, 'unsubscribe failed'));
  }

  /**
   * Compares each streamed tab's stored tail with the seals seen live: a tail ahead for a whole
   * interval means events were lost with no later seal to show the gap, so its streams catch up
   * from the store. One store read per streamed tab per interval, whatever the clients.
   */
  async reconcile(store: Pick<TabStore, 'getTab'>): Promise<void> {
    for (const [tabId, entry] of [...this.tabs]) {
      let lastSeq: number;
      try {
        lastSeq = (await store.getTab(tabId)).lastSeq;
      } catch (error) {
        if (error instanceof NotFoundError) {
          // Streams of a deleted tab would otherwise stay open (and heartbeat) for as long as
          // their clients please, waiting for events that can never come.
          for (const listener of [...entry.listeners]) listener.tabDeleted();
          continue;
        }
        this.logger.debug({ err: error, tabId }, 'reconcile skipped a tab');
        continue;
      }
      if (lastSeq <= entry.seenSeq) {
        entry.suspectSeq = null;
      } else if (entry.suspectSeq !== null && entry.seenSeq < entry.suspectSeq) {
        entry.seenSeq = lastSeq;
        entry.suspectSeq = null;
        for (const listener of entry.listeners) listener.storeAhead(lastSeq);
      } else {
        // Possibly a seal still in flight: judge it at the next interval.
        entry.suspectSeq = lastSeq;
      }
    }
  }

  private dispatch(entry: TabEntry, payload: unknown, subject: string): void {
    const kind = subject.slice(subject.lastIndexOf('.') + 1);
    const parsed = LiveEventSchema.safeParse({ event: kind, data: payload });
    if (!parsed.success) {
      this.logger.warn({ subject, issues: parsed.error.issues.length }, 'dropped invalid event');
      return;
    }
    // A seal's relay is a span of the trace that sealed it (the bus runs this in that context),
    // recorded once the streams' writes have left: none of its cost delays the seal.
    let relaySpan: DeferredSpan | undefined;
    if (parsed.data.event === 'chunk-seal') {
      const chunk = parsed.data.data.chunk;
      entry.seenSeq = Math.max(entry.seenSeq, chunk.seq);
      this.onSealDelay?.(Math.max(0, Date.now() - chunk.createdAt) / 1000);
      relaySpan = startDeferredSpan('chunklog.seal_relay', {
        attributes: {
          'chunklog.tab_id': chunk.tabId,
          'chunklog.chunk_id': chunk.id,
          'chunklog.seq': chunk.seq,
          'chunklog.streams': entry.listeners.size,
        },
      });
    }
    let json: string | undefined;
    const event: HubEvent = {
      live: parsed.data,
      dataJson: () => {
        json ??= JSON.stringify(parsed.data.data);
        return json;
      },
    };
    for (const listener of entry.listeners) listener.event(event);
    relaySpan?.end();
  }
}
