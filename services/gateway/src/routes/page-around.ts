import type { ChunkPage } from '@chunklog/chunk-core';
import type { ChunkReader } from '@chunklog/store';

/** A page centred on a seq: the chunks on both sides, and whether more lie beyond each end. */
export type AroundPage = ChunkPage & { hasMoreBefore: boolean; hasMoreAfter: boolean };

/**
 * Up to `limit` chunks centred on `seq` (the chunk itself among them while the tab holds it),
 * in ascending seq, from the store's ordinary page reads: the half up to and including the seq,
 * then the half after it, and more of the older side when the newer one runs out at the tail.
 * Near either end of the tab the page takes more from the other side, so it is full whenever
 * the tab holds `limit` chunks.
 */
export async function pageAround(
  reader: ChunkReader,
  tabId: string,
  seq: number,
  limit: number,
): Promise<AroundPage> {
  const older = await reader.page(tabId, { before: seq + 1, limit: Math.ceil(limit / 2) });
  // At least one newer chunk is read, for the total and for whether any lie after the page.
  const wanted = limit - older.chunks.length;
  const newer = await reader.page(tabId, { after: seq, limit: Math.max(1, wanted) });
  const hasMoreAfter = newer.hasMore || newer.chunks.length > wanted;
  let chunks = [...older.chunks, ...newer.chunks.slice(0, wanted)];
  let hasMoreBefore = older.hasMore;
  const missing = limit - chunks.length;
  const oldest = older.chunks[0];
  if (missing > 0 && older.hasMore && oldest !== undefined) {
    const more = await reader.page(tabId, { before: oldest.seq, limit: missing });
    chunks = [...more.chunks, ...chunks];
    hasMoreBefore = more.hasMore;
  }
  return {
    chunks,
    total: newer.total,
    hasMore: hasMoreBefore || hasMoreAfter,
    hasMoreBefore,
    hasMoreAfter,
  };
}
