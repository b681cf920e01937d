/**
 * The intake messages this worker is storing into their tabs' inboxes right now, by tab. Items
 * are stored concurrently, so the one taken second can be stored (and get its tab claimed)
 * while the one taken first is still on its way in: a turn's opener is picked only once the
 * tab's messages being stored then are in the inbox, so it is the first message sent.
 */
export class MessagesBeingStored {
  private readonly byTab = new Map<string, Set<Promise<unknown>>>();

  /** Runs `store` for one of the tab's messages, counted until it settles. */
  track<T>(tabId: string, store: () => Promise<T>): Promise<T> {
    const storing = store();
    const tabStoring = this.byTab.get(tabId) ?? new Set<Promise<unknown>>();
    this.byTab.set(tabId, tabStoring);
    tabStoring.add(storing);
    const forget = () => {
      tabStoring.delete(storing);
      if (tabStoring.size === 0 && this.byTab.get(tabId) === tabStoring) this.byTab.delete(tabId);
    };
    storing.then(forget, forget);
    return storing;
  }

  /**
   * Resolves once every message of the tab being stored at the call has been stored or given
   * up on; messages taken later are not waited for, so a busy tab never waits forever.
   */
  async settled(tabId: string): Promise<void> {
    const tabStoring = this.byTab.get(tabId);
    if (tabStoring) await Promise.allSettled([...tabStoring]);
  }
}
