import type { Chunk } from '@chunklog/chunk-core';
import type { ChunkToAppend } from '../holding/tab-session';
import { unansweredToolCalls } from './turn-runner';

/**
 * Where a turn left by a dead worker can go on: the step to run next when the model still owes
 * an answer (the turn's last content is a user message or a tool result), or null when its last
 * content is the model's own output, which may or may not have been its final word.
 */
export function resumePoint(
  log: readonly (Chunk | ChunkToAppend)[],
  turnId: string,
): number | null {
  const content = log.filter(
    (chunk) => chunk.turnId === turnId && chunk.type !== 'system' && chunk.type !== 'error',
  );
  const last = content.at(-1);
  if (!last || last.role === 'assistant') return null;
  const assistantSteps = content
    .filter((chunk) => chunk.role === 'assistant')
    .map((chunk) => chunk.step);
  return assistantSteps.length === 0 ? 0 : Math.max(...assistantSteps) + 1;
}

/**
 * What a worker appends when it takes over a turn whose worker died (DESIGN section 8): an
 * error result for every tool call left unanswered (so the log builds a valid request again)
 * and a `system` chunk saying what happened; and the step to resume at, or null when the turn
 * ends here with reason `error`.
 */
export function planTakeover(input: {
  log: readonly Chunk[];
  turnId: string;
  previousOwner: string;
  workerId: string;
  newId: () => string;
}): { append: ChunkToAppend[]; resumeStep: number | null } {
  const { log, turnId, newId } = input;
  const calls = unansweredToolCalls(log, turnId);
  const append: ChunkToAppend[] = calls.flatMap((call) =>
    call.type === 'tool_call'
      ? [
          {
            id: newId(),
            turnId,
            step: call.step,
            role: 'tool' as const,
            type: 'tool_result' as const,
            data: {
              callId: call.data.callId,
              name: call.data.name,
              result: 'The worker running this tool stopped before it finished.',
              isError: true,
            },
          },
        ]
      : [],
  );
  const resumeStep = resumePoint([...log, ...append], turnId);
  const turnSteps = log.filter((chunk) => chunk.turnId === turnId).map((chunk) => chunk.step);
  append.push({
    id: newId(),
    turnId,
    step: Math.max(0, ...turnSteps),
    role: 'system',
    type: 'system',
    data: {
      kind: 'takeover',
      text:
        `Worker ${input.previousOwner} stopped mid-turn; worker ${input.workerId} took the tab over` +
        (calls.length > 0
          ? ` and answered ${calls.length} unfinished tool call(s) with errors`
          : '') +
        (resumeStep !== null ? ', continuing the turn.' : '; the turn ends here.'),
    },
  });
  return { append, resumeStep };
}
