/**
 * The way out when the API refuses a stored compaction block (its signature no longer verifies:
 * the key changed, or the stored block was altered). Sent again, the block would be refused on
 * every request, forever. Its `content` is the summary in plain text, so the conversation can go
 * on without the signed block: the summary as a user message, then the chunks after the block's
 * cut. A compaction request built from that view gives a fresh block to append.
 */
import type { FoldableChunk } from '../wire/message-fold';

/** The text that opens the summary when it stands in for its compaction block. */
export const SUMMARY_TEXT_PREFIX = 'A summary of the earlier conversation:';

/**
 * `chunks` (in seq order) from their latest compaction on, with that compaction replaced by a
 * user text chunk holding its summary, placed at the block's cut (`throughSeq`) and followed by
 * the chunks above the cut, as the fold would send them after the block. Undefined when
 * `chunks` hold no compaction.
 */
export function compactionAsText<Chunk extends FoldableChunk>(
  chunks: readonly Chunk[],
): FoldableChunk[] | undefined {
  let latest = -1;
  for (let index = chunks.length - 1; index >= 0; index -= 1) {
    if (chunks[index]?.type === 'compaction') {
      latest = index;
      break;
    }
  }
  const compaction = chunks[latest];
  if (compaction === undefined || compaction.type !== 'compaction') return undefined;
  const { block, throughSeq } = compaction.data;
  const summary: FoldableChunk = {
    type: 'text',
    role: 'user',
    data: { text: `${SUMMARY_TEXT_PREFIX}\n\n${block.content}` },
    turnId: compaction.turnId,
    step: compaction.step,
    seq: throughSeq,
  };
  const after = chunks.filter(
    (chunk) => chunk.type !== 'compaction' && chunk.seq !== undefined && chunk.seq > throughSeq,
  );
  return [summary, ...after];
}
