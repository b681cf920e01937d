/** What the worker remembers of a tab's latest step response, across its turns. */
export interface PromptRecord {
  /** The response's id: the next step's `diagnostics.previous_message_id`. */
  messageId: string;
  /**
   * The input the response reported (uncached + cache read + cache write) and the tab's last seq
   * when its request was built; unset after a compaction, which they no longer describe.
   */
  figures?: { inputTokens: number; seq: number };
}

/**
 * The latest step response per tab, kept in memory for the tab's next step (and next turn) on
 * this worker; bounded, oldest tab first out. A tab this worker has no record of (a new worker,
 * a takeover) starts without: its first step asks diagnostics with null and its threshold check
 * estimates the whole request.
 */
export class PromptMemory {
  private readonly records = new Map<string, PromptRecord>();

  constructor(private readonly limit = 10_000) {}

  get(tabId: string): PromptRecord | undefined {
    return this.records.get(tabId);
  }

  set(tabId: string, record: PromptRecord): void {
    this.records.delete(tabId);
    this.records.set(tabId, record);
    if (this.records.size > this.limit) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }

  /** After a compaction: the id still names the previous response, the figures no longer fit. */
  forgetFigures(tabId: string): void {
    const record = this.records.get(tabId);
    if (record !== undefined) this.set(tabId, { messageId: record.messageId });
  }
}
