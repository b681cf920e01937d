import type { Chunk } from '@chunklog/chunk-core';

/** A tool call that waits for a person's decision, as a view shows it. */
export interface WaitingCallView {
  callId: string;
  /** The tool's name. */
  name: string;
  /** The input the model gave the call. */
  arguments: Record<string, unknown>;
  /** Epoch ms after which the call is denied with reason `expired`; null: never. */
  expiresAt: number | null;
  /** The paused turn. */
  turnId: string;
  /** The id of the call's `approval_request` chunk. */
  requestId: string;
}

/**
 * The calls among `chunks` (ascending seq) that wait for a decision: an `approval_request`
 * with neither an `approval_decision` nor a `tool_result` for its call, in the order asked.
 */
export function waitingCalls(chunks: readonly Chunk[]): WaitingCallView[] {
  const settled = new Set<string>();
  for (const chunk of chunks) {
    if (chunk.type === 'approval_decision' || chunk.type === 'tool_result') {
      settled.add(chunk.data.callId);
    }
  }
  const waiting: WaitingCallView[] = [];
  for (const chunk of chunks) {
    if (chunk.type !== 'approval_request' || settled.has(chunk.data.callId)) continue;
    waiting.push({
      callId: chunk.data.callId,
      name: chunk.data.name,
      arguments: chunk.data.arguments,
      expiresAt: chunk.data.expiresAt,
      turnId: chunk.turnId,
      requestId: chunk.id,
    });
  }
  return waiting;
}
