import type { Chunk } from '@chunklog/chunk-core';
import type { BigintValue } from '../input';

/** The select list every chunk read uses; times leave the database as epoch ms. */
export const chunkColumns = `c.id, c.tab_id, c.seq, c.turn_id, c.step, c.role, c.type, c.data,
  floor(extract(epoch FROM c.created_at) * 1000)::double precision AS created_at_ms`;

export interface ChunkRow extends Record<string, unknown> {
  id: string;
  seq: BigintValue;
  turn_id: string;
  step: number;
  role: string;
  type: string;
  data: unknown;
  created_at_ms: number;
}

/**
 * A stored row as the API's chunk. The row was validated by NewChunkSchema on its way in, so
 * it is trusted here rather than parsed again on every page read.
 */
export function chunkFromRow(tabId: string, row: ChunkRow): Chunk {
  return {
    id: row.id,
    tabId,
    seq: Number(row.seq),
    turnId: row.turn_id,
    step: row.step,
    role: row.role,
    type: row.type,
    data: row.data,
    createdAt: row.created_at_ms,
  } as Chunk;
}
