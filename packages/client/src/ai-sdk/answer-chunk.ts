import type { Chunk } from '@chunklog/chunk-core';

/** The UI message part a sealed chunk becomes, or null for chunks a chat does not show. */
export type AnswerPartKind = 'text' | 'reasoning' | 'tool-call' | 'tool-result';

/**
 * Which part of an assistant message a chunk gives: assistant text, readable thinking, a tool
 * call, its result. User chunks are messages of their own; system notices, errors, redacted
 * thinking and compaction summaries give no part. The live fold and the fold of a stored log
 * share this, so a message rebuilt from the log has the parts (and the id) it streamed with.
 */
export function answerPartKind(chunk: Chunk): AnswerPartKind | null {
  switch (chunk.type) {
    case 'text':
      return chunk.role === 'assistant' ? 'text' : null;
    case 'thinking':
      return 'text' in chunk.data ? 'reasoning' : null;
    case 'tool_call':
      return 'tool-call';
    case 'tool_result':
      return 'tool-result';
    default:
      return null;
  }
}

/** The text of a text or thinking chunk ('' for others and redacted thinking). */
export function chunkText(chunk: Chunk): string {
  if (chunk.type === 'text') return chunk.data.text;
  if (chunk.type === 'thinking' && 'text' in chunk.data) return chunk.data.text;
  return '';
}
