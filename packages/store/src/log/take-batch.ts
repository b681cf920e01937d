/** What the group commit needs to know of a waiting append to place it in a batch. */
export interface BatchCandidate {
  tabId: string;
  /** Ids of its chunks, in order. */
  chunkIds: readonly string[];
  /** Length of its chunks' JSON. */
  bytes: number;
}

export interface BatchLimits {
  maxItems: number;
  maxChunks: number;
  maxBytes: number;
}

/**
 * The next batch from the waiting appends, in call order: those that fit the limits, whose tab
 * has no batch in flight and whose chunk ids are not in the batch yet. An append left waiting
 * holds back every later one of its tab, so a tab's appends run in call order; the first one
 * is taken whatever its size.
 */
export function takeBatch<Item extends BatchCandidate>(
  waiting: readonly Item[],
  busyTabs: ReadonlySet<string>,
  limits: BatchLimits,
): { batch: Item[]; rest: Item[] } {
  const batch: Item[] = [];
  const rest: Item[] = [];
  const blocked = new Set(busyTabs);
  const ids = new Set<string>();
  let bytes = 0;
  for (const item of waiting) {
    const fits =
      batch.length === 0 ||
      (batch.length < limits.maxItems &&
        ids.size + item.chunkIds.length <= limits.maxChunks &&
        bytes + item.bytes <= limits.maxBytes &&
        !item.chunkIds.some((id) => ids.has(id)));
    if (fits && !blocked.has(item.tabId)) {
      batch.push(item);
      for (const id of item.chunkIds) ids.add(id);
      bytes += item.bytes;
    } else {
      rest.push(item);
      blocked.add(item.tabId);
    }
  }
  return { batch, rest };
}
