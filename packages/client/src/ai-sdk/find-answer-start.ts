import type { ChunklogClient } from '../client';
import type { AnswerStart } from './answer-parts';

const pageSize = 100;

/**
 * Where the answer of `turnId` (by default the tab's running turn) that a chat shows last
 * starts, read from the log: after the turn's last user chunk, or at the turn's first chunk
 * when it has none (a compaction). Null when no turn runs.
 */
export async function findAnswerStart(
  client: ChunklogClient,
  tabId: string,
  turnId: string | null,
  signal?: AbortSignal,
): Promise<AnswerStart | null> {
  const activeTurnId = turnId ?? (await client.getTab(tabId, signal)).activeTurnId;
  if (activeTurnId === null) return null;
  let before: number | undefined;
  for (;;) {
    const query = before === undefined ? { limit: pageSize } : { limit: pageSize, before };
    const page = await client.chunks(tabId, query, signal);
    for (const chunk of [...page.chunks].reverse()) {
      // The answer begins after the turn's last user chunk, or after the turn before it.
      if (chunk.turnId !== activeTurnId || chunk.role === 'user') {
        return { after: chunk.seq, userChunkId: null, turnId: activeTurnId };
      }
    }
    const first = page.chunks[0];
    if (first === undefined || !page.hasMore) {
      return { after: (first?.seq ?? 1) - 1, userChunkId: null, turnId: activeTurnId };
    }
    before = first.seq;
  }
}
