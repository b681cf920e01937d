import { chunkColumns } from './chunk-row';

/** Which end of a tab a page is read from. */
export type PageRange =
  | { kind: 'tail' }
  | { kind: 'before'; seq: number }
  | { kind: 'after'; seq: number };

/**
 * The one statement behind a page: the tab's total and up to `fetch` chunks, read in the same
 * snapshot. Chunks leave a tab only all at once (clear, delete), so its seqs run gap-free from
 * the lowest stored to the highest stored: total is their difference plus one, two index
 * probes whatever the tab's size, never a count. The lateral subquery is a range scan of the
 * (tab_id, seq) index, backwards from the tail or from `before`, forwards from `after`, so its
 * cost does not depend on how deep in the tab the page lies and no sort over the tab is ever
 * needed. Parameters: $1 tab id, $2 rows to fetch, $3 the bound seq (absent for the tail).
 */
export function pageStatement(
  tabId: string,
  fetch: number,
  range: PageRange,
): { name: string; text: string; values: unknown[]; descending: boolean } {
  const shape = (() => {
    switch (range.kind) {
      case 'tail':
        return { condition: '', order: 'DESC', values: [] };
      case 'before':
        return { condition: 'AND c.seq < $3', order: 'DESC', values: [range.seq] };
      case 'after':
        return { condition: 'AND c.seq > $3', order: 'ASC', values: [range.seq] };
      default: {
        const exhaustive: never = range;
        throw new TypeError(`unknown page range ${JSON.stringify(exhaustive)}`);
      }
    }
  })();
  return {
    name: `chunklog_page_${range.kind}`,
    text: `SELECT
        (SELECT h.seq FROM chunks h WHERE h.tab_id = t.id ORDER BY h.seq DESC LIMIT 1) AS highest_seq,
        (SELECT l.seq FROM chunks l WHERE l.tab_id = t.id ORDER BY l.seq ASC LIMIT 1) AS lowest_seq,
        ${chunkColumns}
      FROM tabs t
      LEFT JOIN LATERAL (
        SELECT * FROM chunks c WHERE c.tab_id = t.id ${shape.condition}
        ORDER BY c.seq ${shape.order} LIMIT $2
      ) c ON true
      WHERE t.id = $1`,
    values: [tabId, fetch, ...shape.values],
    descending: shape.order === 'DESC',
  };
}
