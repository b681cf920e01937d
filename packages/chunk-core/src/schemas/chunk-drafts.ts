import type { ChunkBody, ToolResultData } from './chunk';

/** A chunk as a writer hands it to the store, which adds tabId, seq and createdAt. */
export type ChunkDraft = ChunkBody & { id: string; turnId: string; step: number };

/** Where a new chunk goes: its id, its turn and the model step it belongs to. */
export interface ChunkPlace {
  id: string;
  turnId: string;
  step: number;
}

/** A user message. */
export function userTextChunk(place: ChunkPlace, text: string): ChunkDraft {
  return { ...place, role: 'user', type: 'text', data: { text } };
}

/** A tool's answer to one call. */
export function toolResultChunk(place: ChunkPlace, data: ToolResultData): ChunkDraft {
  return { ...place, role: 'tool', type: 'tool_result', data };
}

/** A notice from the system to the reader of the log (`kind` names what happened). */
export function systemNoticeChunk(place: ChunkPlace, kind: string, text: string): ChunkDraft {
  return { ...place, role: 'system', type: 'system', data: { kind, text } };
}

/**
 * An error that ended (part of) a turn: `assistant` when the model call failed, `system` when
 * the turn itself did.
 */
export function errorChunk(
  place: ChunkPlace,
  role: 'assistant' | 'system',
  message: string,
  statusCode?: number,
): ChunkDraft {
  return {
    ...place,
    role,
    type: 'error',
    data: { message, ...(statusCode !== undefined ? { statusCode } : {}) },
  };
}
