import { chunkColumns } from './chunk-row';

/**
 * The parts of a tab's history as `(tab_id, lo, hi)`, seqs `lo < seq <= hi` of `tab_id`'s rows:
 * the tab's own chunks, and for a fork the ranges of its ancestors it refers to (fork_segments).
 * A plain tab has the one segment of its own; a fork n levels deep has n + 1. `tab` is the SQL
 * of the tab id (a parameter).
 */
export function segmentsOf(tab: string): string {
  return `SELECT ${tab}::uuid AS tab_id, 0::bigint AS lo, 9223372036854775807::bigint AS hi
    UNION ALL
    SELECT s.ancestor_id, s.lo, s.hi FROM fork_segments s WHERE s.tab_id = ${tab}::uuid`;
}

/** Which end of a tab a page is read from. */
export type PageRange =
  | { kind: 'tail' }
  | { kind: 'before'; seq: number }
  | { kind: 'after'; seq: number };

/**
 * The one statement behind a page: the tab's total and up to `fetch` chunks in one snapshot.
 * Seqs are gap-free between the lowest and highest stored, so total is two index probes per
 * segment, never a count; the chunks are a range scan of (tab_id, seq) per segment, so a page
 * costs the same at any depth, and a fork's pages read its ancestors' rows in place.
 * Parameters: $1 tab id, $2 rows to fetch, $3 the bound seq (absent for the tail).
 */
export function pageStatement(
  tabId: string,
  fetch: number,
  range: PageRange,
): { name: string; text: string; values: unknown[]; descending: boolean } {
  // A tab's seqs are gap-free from its lowest to its highest, a fork's across its segments too,
  // so a page is a seq range known before any row is read: each segment reads only its part of
  // it, and the merge sorts at most a page.
  const shape = (() => {
    switch (range.kind) {
      case 'tail':
        return { lower: 'b.highest_seq - $2', upper: 'b.highest_seq', order: 'DESC', values: [] };
      case 'before':
        return {
          lower: '$3::bigint - 1 - $2',
          upper: '$3::bigint - 1',
          order: 'DESC',
          values: [range.seq],
        };
      case 'after':
        return { lower: '$3::bigint', upper: '$3::bigint + $2', order: 'ASC', values: [range.seq] };
      default: {
        const exhaustive: never = range;
        throw new TypeError(`unknown page range ${JSON.stringify(exhaustive)}`);
      }
    }
  })();
  return {
    name: `chunklog_page_${range.kind}`,
    text: `WITH segments AS (${segmentsOf('$1')}),
      bounds AS MATERIALIZED (SELECT
        (SELECT max(h.seq) FROM segments g, LATERAL (
          SELECT h.seq FROM chunks h WHERE h.tab_id = g.tab_id AND h.seq > g.lo AND h.seq <= g.hi
          ORDER BY h.seq DESC LIMIT 1) h) AS highest_seq,
        (SELECT min(l.seq) FROM segments g, LATERAL (
          SELECT l.seq FROM chunks l WHERE l.tab_id = g.tab_id AND l.seq > g.lo AND l.seq <= g.hi
          ORDER BY l.seq ASC LIMIT 1) l) AS lowest_seq)
      SELECT b.highest_seq, b.lowest_seq, ${chunkColumns}
      FROM tabs t CROSS JOIN bounds b
      LEFT JOIN LATERAL (
        SELECT c.* FROM segments g, LATERAL (
          SELECT * FROM chunks c
          WHERE c.tab_id = g.tab_id
            AND c.seq > greatest(g.lo, ${shape.lower}) AND c.seq <= least(g.hi, ${shape.upper})
          ORDER BY c.seq ${shape.order} LIMIT $2) c
        ORDER BY c.seq ${shape.order} LIMIT $2
      ) c ON true
      WHERE t.id = $1`,
    values: [tabId, fetch, ...shape.values],
    descending: shape.order === 'DESC',
  };
}
