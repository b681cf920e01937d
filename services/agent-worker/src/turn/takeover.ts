import { type Chunk, type ChunkDraft, systemNoticeChunk } from '@chunklog/chunk-core';
import { planUnansweredResults } from './plan';

/**
 * Where a turn left by a dead worker can go on: the step to run next when the model still owes
 * an answer (the turn's last content is a user message or a tool result), or null when its last
 * content is the model's own output, which may or may not have been its final word. A
 * compaction is no answer: one stored before a step leaves that step still owed.
 */
export function resumePoint(log: readonly ChunkDraft[], turnId: string): number | null {
  const content = log.filter(
    (chunk) =>
      chunk.turnId === turnId &&
      chunk.type !== 'system' &&
      chunk.type !== 'error' &&
      chunk.type !== 'compaction',
  );
  const last = content.at(-1);
  if (!last || last.role === 'assistant') return null;
  const assistantSteps = content
    .filter((chunk) => chunk.role === 'assistant')
    .map((chunk) => chunk.step);
  return assistantSteps.length === 0 ? 0 : Math.max(...assistantSteps) + 1;
}

/**
 * What a worker appends when it takes over a turn whose worker died
 * (docs/architecture.md, "Turns, leases and takeover"): an error result for every tool call
 * left unanswered (so the log builds a valid request again) and a `system` chunk saying what
 * happened; and the step to resume at, or null when the turn ends here with reason `error`.
 */
export function planTakeover(input: {
  log: readonly Chunk[];
  turnId: string;
  previousOwner: string;
  workerId: string;
  newId: () => string;
}): { append: ChunkDraft[]; resumeStep: number | null } {
  const { log, turnId, newId } = input;
  const append = planUnansweredResults(
    log,
    turnId,
    'The worker running this tool stopped before it finished.',
    newId,
  );
  const answered = append.length;
  const resumeStep = resumePoint([...log, ...append], turnId);
  const turnSteps = log.filter((chunk) => chunk.turnId === turnId).map((chunk) => chunk.step);
  append.push(
    systemNoticeChunk(
      { id: newId(), turnId, step: Math.max(0, ...turnSteps) },
      'takeover',
      (input.previousOwner === input.workerId
        ? `Worker ${input.workerId} lost this turn mid-way (a store outage or a restart) and took it up again`
        : `Worker ${input.previousOwner} stopped mid-turn; worker ${input.workerId} took the tab over`) +
        (answered > 0 ? ` and answered ${answered} unfinished tool call(s) with errors` : '') +
        (resumeStep !== null ? ', continuing the turn.' : '; the turn ends here.'),
    ),
  );
  return { append, resumeStep };
}
