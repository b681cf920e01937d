import type { Chunk } from '@chunklog/chunk-core';
import type { ChunkToAppend } from './tab-session';

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
