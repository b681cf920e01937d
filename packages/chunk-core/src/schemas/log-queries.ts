import type { ChunkDraft } from './chunk-drafts';

/** A tool call as it sits in the log. */
export type ToolCallChunk<C extends ChunkDraft = ChunkDraft> = C & { type: 'tool_call' };

/** The turn's tool calls that have no result in the log yet, in log order. */
export function unansweredToolCalls<C extends ChunkDraft>(
  log: readonly C[],
  turnId: string,
): ToolCallChunk<C>[] {
  const answered = new Set<string>();
  for (const chunk of log) if (chunk.type === 'tool_result') answered.add(chunk.data.callId);
  return log.filter(
    (chunk): chunk is ToolCallChunk<C> =>
      chunk.turnId === turnId && chunk.type === 'tool_call' && !answered.has(chunk.data.callId),
  );
}

/** The text the model wrote in its last step, its blocks joined by newlines ('' if none). */
export function lastStepText(log: readonly ChunkDraft[]): string {
  const assistant = log.filter((chunk) => chunk.role === 'assistant');
  const lastStep = Math.max(-1, ...assistant.map((chunk) => chunk.step));
  return assistant
    .filter((chunk) => chunk.step === lastStep)
    .flatMap((chunk) => (chunk.type === 'text' ? [chunk.data.text] : []))
    .join('\n');
}
