/** What the group commit needs to know of a waiting append to place it in a batch. */
export interface BatchCandidate {
  tabId: string;
  chunkCount: number;
  /** Length of its chunks' JSON. */
  bytes: number;
}

export interface BatchLimits {
  maxItems: number;
  maxChunks: number;
  maxBytes: number;
}

/**
 * The next batch from the waiting appends, in call order: every one that fits the limits and
 * whose tab is not in a batch still in flight. Once an append is left waiting, every later one
 * of its tab waits too, so a tab's appends run in the order they were called. The first
 * eligible append is taken whatever its size (one append alone is always allowed).
 */
export function takeBatch<Item extends BatchCandidate>(
  waiting: readonly Item[],
  busyTabs: ReadonlySet<string>,
  limits: BatchLimits,
): { batch: Item[]; rest: Item[] } {
  const batch: Item[] = [];
  const rest: Item[] = [];
  const blocked = new Set(busyTabs);
  let chunks = 0;
  let bytes = 0;
  for (const item of waiting) {
    const fits =
      batch.length === 0 ||
      (batch.length < limits.maxItems &&
        chunks + item.chunkCount <= limits.maxChunks &&
        bytes + item.bytes <= limits.maxBytes);
    if (fits && !blocked.has(item.tabId)) {
      batch.push(item);
      chunks += item.chunkCount;
      bytes += item.bytes;
    } else {
      rest.push(item);
      blocked.add(item.tabId);
    }
  }
  return { batch, rest };
}
