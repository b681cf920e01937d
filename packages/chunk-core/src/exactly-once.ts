/**
 * The rules that make a tab's stream exactly-once, for every side that delivers or keeps it
 * (the gateway's relay, the client's resume filter, the chunk window): seals are placed by seq,
 * deltas by the offset of their text in their block.
 */

/**
 * Where a sealed chunk falls after `lastSeq`, the last seq delivered: at or below it a
 * `duplicate` (drop it), right after it the `next` one (deliver it), beyond that a `gap`
 * (seqs in between were missed: fetch them first).
 */
export type SealPlacement = 'duplicate' | 'next' | 'gap';

export function placeSeal(lastSeq: number, seq: number): SealPlacement {
  if (seq <= lastSeq) return 'duplicate';
  return seq === lastSeq + 1 ? 'next' : 'gap';
}

/**
 * Where a delta falls in a block of which `delivered` characters were delivered: all of it
 * already delivered (`duplicate`), starting past them (`gap`: characters in between were
 * missed), or adding `text` at `offset === delivered` (`fresh`; `whole` when the delta is the
 * event as it came, not trimmed).
 */
export type DeltaPlacement =
  | { kind: 'duplicate' }
  | { kind: 'gap' }
  | { kind: 'fresh'; offset: number; text: string; whole: boolean };

export function placeDelta(delivered: number, offset: number, text: string): DeltaPlacement {
  if (offset > delivered) return { kind: 'gap' };
  if (offset + text.length <= delivered) return { kind: 'duplicate' };
  if (offset === delivered) return { kind: 'fresh', offset, text, whole: true };
  return { kind: 'fresh', offset: delivered, text: text.slice(delivered - offset), whole: false };
}
