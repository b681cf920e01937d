import type { Chunk } from '../schemas/chunk';

/**
 * Where a tab may be forked: after a seq where no step is cut in two. Allowed: 0 (a fork with
 * no history), a turn's end, and inside a turn the end of a step whose tool calls all have their
 * results (the next chunk opens the next step). Refused: the middle of a step, or after a call
 * whose result (or whose person's decision) is still to come.
 *
 * `window` is the parent's chunks up to `atSeq + 1` or more, ascending (a page is enough: a
 * step longer than the window is judged on what the window holds).
 */
export function isForkPoint(window: readonly Chunk[], atSeq: number): boolean {
  if (atSeq === 0) return true;
  const at = window.findIndex((chunk) => chunk.seq === atSeq);
  if (at === -1) return false;
  const last = window[at]!;
  const next = window[at + 1];
  // The model's blocks of a step, and their results, belong together; a user message may be
  // followed by the model's answer in a fork (a regenerate), and a user message that joined the
  // turn, or a notice, may follow anything.
  const stepGoesOn =
    next !== undefined &&
    last.role !== 'user' &&
    next.turnId === last.turnId &&
    next.step === last.step &&
    (next.role === 'assistant' || next.type === 'tool_result');
  if (stepGoesOn) return false;
  const answered = new Set<string>();
  for (const chunk of window.slice(0, at + 1)) {
    if (chunk.type === 'tool_result') answered.add(chunk.data.callId);
  }
  return !window
    .slice(0, at + 1)
    .some(
      (chunk) =>
        chunk.turnId === last.turnId &&
        chunk.type === 'tool_call' &&
        !answered.has(chunk.data.callId),
    );
}

/** The allowed fork points nearest `atSeq` in the window, below and above (null: none there). */
export function nearestForkPoints(
  window: readonly Chunk[],
  atSeq: number,
): { below: number | null; above: number | null } {
  const allowed = [0, ...window.map((chunk) => chunk.seq)].filter((seq) =>
    isForkPoint(window, seq),
  );
  const below = allowed.filter((seq) => seq < atSeq).at(-1) ?? null;
  // The window's last chunk may end a step whose next chunk the window does not hold.
  const lastSeq = window.at(-1)?.seq;
  const above = allowed.find((seq) => seq > atSeq && seq !== lastSeq) ?? null;
  return { below, above };
}
