import type { Bus, Subscription } from '@chunklog/bus';
import { type LiveEvent, LiveEventSchema, tabEventsSubject } from '@chunklog/chunk-core';
import type { FastifyBaseLogger } from 'fastify';

/** A validated live event, with its JSON encoded once however many clients receive it. */
export interface HubEvent {
  live: LiveEvent;
  /** JSON of the event's data, computed on first use and shared. */
  dataJson(): string;
}

export type HubListener = (event: HubEvent) => void;

interface TabEntry {
  listeners: Set<HubListener>;
  subscription: Promise<Subscription>;
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
  ) {}

  /** Starts delivering the tab's live events to the listener; resolves once subscribed. */
  async join(tabId: string, listener: HubListener): Promise<() => void> {
    let entry = this.tabs.get(tabId);
    if (!entry) {
      const listeners = new Set<HubListener>();
      const subscription = this.bus.subscribe(tabEventsSubject(tabId), (payload, subject) =>
        this.dispatch(listeners, payload, subject),
      );
      entry = { listeners, subscription };
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

  private dispatch(listeners: Set<HubListener>, payload: unknown, subject: string): void {
    const kind = subject.slice(subject.lastIndexOf('.') + 1);
    const parsed = LiveEventSchema.safeParse({ event: kind, data: payload });
    if (!parsed.success) {
      this.logger.warn({ subject, issues: parsed.error.issues.length }, 'dropped invalid event');
      return;
    }
    let json: string | undefined;
    const event: HubEvent = {
      live: parsed.data,
      dataJson: () => {
        json ??= JSON.stringify(parsed.data.data);
        return json;
      },
    };
    for (const listener of listeners) listener(event);
  }
}
