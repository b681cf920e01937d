import { chunkColumns } from './chunk-row';

/** Which end of a tab a page is read from. */
export type PageRange =
  | { kind: 'tail' }
  | { kind: 'before'; seq: number }
  | { kind: 'after'; seq: number };

/**
 * The one statement behind a page: the tab's total and up to `fetch` chunks in one snapshot.
 * Seqs are gap-free between the lowest and highest stored, so total is two index probes, never
 * a count; the chunks are a range scan of (tab_id, seq), so a page costs the same at any depth.
 * Parameters: $1 tab id, $2 rows to fetch, $3 the bound seq (absent for the tail).
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
