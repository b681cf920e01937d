import type { Tab, TabConfig, TabStatus } from '@chunklog/chunk-core';
import type { BigintValue } from '../input';

/**
 * The select list every tab read uses (table alias t); times leave the database as epoch ms.
 * lastSeq is the tail the append function computes: the highest stored seq (one backward index
 * probe) or the highest seq a clear removed, whichever is higher.
 */
export const tabColumns = `t.id, t.position, t.tenant_id, t.parent_tab_id, t.fork_of, t.fork_seq,
  t.title, t.config,
  t.status, t.active_turn_id, t.waiting,
  greatest(t.seq_floor, coalesce(
    (SELECT c.seq FROM chunks c WHERE c.tab_id = t.id ORDER BY c.seq DESC LIMIT 1), 0)) AS last_seq,
  t.usage_input_tokens, t.usage_output_tokens,
  t.usage_cache_read_input_tokens, t.usage_cache_creation_input_tokens,
  floor(extract(epoch FROM t.created_at) * 1000)::double precision AS created_at_ms,
  floor(extract(epoch FROM t.updated_at) * 1000)::double precision AS updated_at_ms`;

export interface TabRow extends Record<string, unknown> {
  id: string;
  position: BigintValue;
  tenant_id: string;
  parent_tab_id: string | null;
  fork_of: string | null;
  fork_seq: BigintValue | null;
  title: string;
  config: TabConfig;
  status: TabStatus;
  active_turn_id: string | null;
  /** The paused turn (see TabWaiting), or null. */
  waiting: {
    turnId: string;
    calls: { callId: string; name: string; arguments: Record<string, unknown> }[];
    expiresAt: number | null;
  } | null;
  last_seq: BigintValue;
  usage_input_tokens: BigintValue;
  usage_output_tokens: BigintValue;
  usage_cache_read_input_tokens: BigintValue;
  usage_cache_creation_input_tokens: BigintValue;
  created_at_ms: number;
  updated_at_ms: number;
}

/** A stored row as the API's tab (the tenant and lease fields stay inside the store). */
export function tabFromRow(row: TabRow): Tab {
  return {
    id: row.id,
    parentTabId: row.parent_tab_id,
    forkOf: row.fork_of,
    forkSeq: row.fork_seq === null ? null : Number(row.fork_seq),
    title: row.title,
    config: row.config,
    // A paused turn holds no lease: the tab is idle in the table and waiting to its reader.
    status: row.status === 'idle' && row.waiting !== null ? 'waiting' : row.status,
    activeTurnId: row.active_turn_id,
    waiting:
      row.waiting === null
        ? null
        : {
            turnId: row.waiting.turnId,
            calls: row.waiting.calls.map(({ callId, name, arguments: input }) => ({
              callId,
              name,
              arguments: input,
            })),
            expiresAt: row.waiting.expiresAt,
          },
    lastSeq: Number(row.last_seq),
    usage: {
      inputTokens: Number(row.usage_input_tokens),
      outputTokens: Number(row.usage_output_tokens),
      cacheReadInputTokens: Number(row.usage_cache_read_input_tokens),
      cacheCreationInputTokens: Number(row.usage_cache_creation_input_tokens),
    },
    createdAt: row.created_at_ms,
    updatedAt: row.updated_at_ms,
  };
}
