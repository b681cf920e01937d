import type { Chunk, NewChunk } from '@chunklog/chunk-core';
import type { Span } from '@opentelemetry/api';
import type { BigintValue } from '../input';
import { mapDatabaseError, sqlState } from '../map-database-error';
import type { SqlClient } from '../sql-client';
import type { AppendMetrics } from './append-metrics';
import { type ChunkRow, chunkFromRow } from './chunk-row';
import { type BatchLimits, takeBatch } from './take-batch';

/** A validated append, as chunklog_append takes it. */
export interface AppendRequest {
  tabId: string;
  /** The validated chunks, in order. */
  chunks: readonly NewChunk[];
  chunksJson: string;
  /** Its chunks' ids, in order. */
  chunkIds: readonly string[];
  expectedSeq: number | null;
}

/**
 * An append in the queue, built field by field rather than spread from the request: a spread
 * copy costs several times as much to build, and its entries outlive young-generation
 * collections (promoted, to be collected by a full one).
 */
interface Waiting {
  tabId: string;
  chunks: readonly NewChunk[];
  chunksJson: string;
  chunkIds: readonly string[];
  expectedSeq: number | null;
  /** The caller's append span, told the batch it committed in. */
  span: Span | undefined;
  bytes: number;
  queuedAt: number;
  resolve(chunks: Chunk[]): void;
  reject(error: unknown): void;
}

/** A row a batch stored: id, seq and time only, as the append holds the rest. */
interface BatchRow extends Record<string, unknown> {
  id: string;
  seq: BigintValue;
  created_at_ms: number;
}

export interface GroupCommitOptions {
  /** Batches in flight at once (database connections appends use). */
  lanes: number;
  limits: BatchLimits;
  metrics: AppendMetrics;
}

/** The batch functions' statements, prepared once per connection under their names. */
const batchFunctions = {
  distinct: {
    name: 'chunklog_append_batch_distinct',
    text: 'SELECT * FROM chunklog_append_batch_distinct($1::uuid[], $2::jsonb, $3::bigint[])',
  },
  general: {
    name: 'chunklog_append_batch',
    text: 'SELECT * FROM chunklog_append_batch($1::uuid[], $2::jsonb, $3::bigint[])',
  },
};

/** A chunk of the append as the batch stored it (the fields in chunkFromRow's order). */
function storedChunk(chunk: NewChunk, row: BatchRow): Chunk {
  return {
    id: chunk.id,
    tabId: chunk.tabId,
    seq: Number(row.seq),
    turnId: chunk.turnId,
    step: chunk.step,
    role: chunk.role,
    type: chunk.type,
    data: chunk.data,
    createdAt: row.created_at_ms,
  } as Chunk;
}

/**
 * Errors about the batch's statement itself (a unique violation or deadlock from a concurrent
 * append, one append's data refused), after which the batch wrote nothing and its appends are
 * made one by one, each with its own answer. A lost connection fails the whole batch.
 */
function oneByOneAfter(code: string | undefined): boolean {
  return code !== undefined && /^(22|23|40|CL)/.test(code);
}

/**
 * Group commit behind the append port. An append that finds a lane free runs at once, alone,
 * as the single chunklog_append statement (no wait when there is nothing to batch). Appends
 * that arrive while every lane is busy queue, and the next free lane takes all of them that fit
 * in one chunklog_append_batch: one transaction, one commit flush, one round trip for the lot.
 * A tab is in at most one batch at a time, and its appends run in the order they were called.
 */
export interface GroupCommit {
  /** `span`, the caller's append span, is told the batch the append committed in. */
  append(request: AppendRequest, span?: Span): Promise<Chunk[]>;
  /** Resolves once no append is waiting or in flight (before the connections close). */
  idle(): Promise<void>;
}

export function createGroupCommit(client: SqlClient, options: GroupCommitOptions): GroupCommit {
  let waiting: Waiting[] = [];
  const busyTabs = new Set<string>();
  let inFlight = 0;
  let idleWaiters: Array<() => void> = [];
  /** A lane freed while appends waited; the next batch starts on the next turn of the loop. */
  let pumpScheduled = false;

  /**
   * Runs a prepared statement. `batch`: it is a batch's own statement, and its time to answer
   * (or fail) is reported as the batch's duration.
   */
  async function query<Row extends Record<string, unknown>>(
    statement: { name: string; text: string; values: unknown[] },
    batch: boolean,
  ): Promise<Row[]> {
    const started = performance.now();
    try {
      return await client.query<Row>(statement.text, statement.values, statement.name);
    } finally {
      if (batch) options.metrics.batchDuration((performance.now() - started) / 1000);
    }
  }

  /** `alone`: the append is a batch of its own, rather than one made again after a batch. */
  async function appendOne(request: Waiting, alone: boolean): Promise<Chunk[]> {
    const statement = {
      name: 'chunklog_append',
      text: 'SELECT * FROM chunklog_append($1, $2::jsonb, $3)',
      values: [request.tabId, request.chunksJson, request.expectedSeq],
    };
    try {
      const rows = await query<ChunkRow>(statement, alone);
      return rows.map((row) => chunkFromRow(request.tabId, row));
    } catch (error) {
      throw mapDatabaseError(error, 'append');
    }
  }

  async function settleOne(item: Waiting, alone = false): Promise<void> {
    try {
      item.resolve(await appendOne(item, alone));
    } catch (error) {
      item.reject(error);
    }
  }

  /**
   * The batch in one statement: chunklog_append_batch_distinct when every append carries one
   * chunk and no tab comes twice (the common case, a plainer statement), chunklog_append_batch
   * otherwise. Both write nothing for a tab that does not exist or whose expected seq does not
   * match, and return the rows they stored.
   */
  function batchStatement(batch: Waiting[]): { name: string; text: string; values: string[] } {
    const tabs = new Set<string>();
    let distinct = true;
    let tabIds = '';
    let expectedSeqs = '';
    for (const item of batch) {
      if (item.chunks.length !== 1 || tabs.has(item.tabId)) distinct = false;
      tabs.add(item.tabId);
      const comma = tabIds === '' ? '' : ',';
      tabIds += `${comma}${item.tabId}`;
      expectedSeqs += `${comma}${item.expectedSeq ?? 'NULL'}`;
    }
    // The distinct function takes each append's one chunk, the general one its array.
    let chunks = '';
    for (const item of batch) {
      const json = distinct ? item.chunksJson.slice(1, -1) : item.chunksJson;
      chunks += chunks === '' ? json : `,${json}`;
    }
    const { name, text } = distinct ? batchFunctions.distinct : batchFunctions.general;
    return { name, text, values: [`{${tabIds}}`, `[${chunks}]`, `{${expectedSeqs}}`] };
  }

  async function runBatch(batch: Waiting[]): Promise<void> {
    const statement = batchStatement(batch);
    let rows: BatchRow[];
    try {
      rows = await query<BatchRow>(statement, true);
    } catch (error) {
      if (oneByOneAfter(sqlState(error))) {
        for (const item of batch) await settleOne(item);
        return;
      }
      // Connection lost, server fault: the statement (its transaction) wrote nothing or
      // everything, and which cannot be known here; every append of the batch fails alike.
      const mapped = mapDatabaseError(error, 'append');
      for (const item of batch) item.reject(mapped);
      return;
    }
    // Stored rows come back by chunk id (no chunk id is in two appends of one batch). An append
    // whose chunks did not come back was left out: its tab does not exist, or its expected seq
    // did not match.
    const stored = new Map<string, BatchRow>();
    for (const row of rows) stored.set(row.id, row);
    const leftOut: Waiting[] = [];
    for (const item of batch) {
      const chunks: Chunk[] = [];
      for (const chunk of item.chunks) {
        const row = stored.get(chunk.id);
        if (row === undefined) break;
        chunks.push(storedChunk(chunk, row));
      }
      if (chunks.length === item.chunks.length) item.resolve(chunks);
      else leftOut.push(item);
    }
    // In call order, after the batch committed: each gets exactly its answer alone (appending
    // is idempotent by chunk id, so even a partly stored append would be answered whole).
    for (const item of leftOut) await settleOne(item);
  }

  function wakeIdleWaiters(): void {
    for (const wake of idleWaiters) wake();
    idleWaiters = [];
  }

  function pump(): void {
    if (inFlight === 0 && waiting.length === 0) wakeIdleWaiters();
    while (inFlight < options.lanes && waiting.length > 0) {
      const { batch, rest } = takeBatch(waiting, busyTabs, options.limits);
      if (batch.length === 0) return;
      waiting = rest;
      inFlight += 1;
      const started = performance.now();
      for (const item of batch) {
        busyTabs.add(item.tabId);
        options.metrics.queueWait((started - item.queuedAt) / 1000);
        if (item.span?.isRecording()) {
          item.span.setAttributes({
            'chunklog.append.batch_size': batch.length,
            'chunklog.append.queue_wait_ms': started - item.queuedAt,
          });
        }
      }
      options.metrics.batch(batch.length);
      const run = batch.length === 1 ? settleOne(batch[0]!, true) : runBatch(batch);
      void run
        .catch((error: unknown) => {
          // Unreachable unless a bug threw above: fail whatever is left rather than hang.
          for (const item of batch) item.reject(error);
        })
        .finally(() => {
          inFlight -= 1;
          for (const item of batch) busyTabs.delete(item.tabId);
          if (waiting.length === 0 && batch.length === 1) {
            if (inFlight === 0) wakeIdleWaiters();
            return;
          }
          // Under load (appends waited, or came in a batch), the callers this batch just
          // answered are mostly about to append again: one turn of the event loop lets them all
          // join the next batch, instead of the first of them taking the lane alone and the
          // rest trailing it.
          if (!pumpScheduled) {
            pumpScheduled = true;
            setImmediate(() => {
              pumpScheduled = false;
              pump();
            });
          }
        });
    }
  }

  return {
    append(request: AppendRequest, span?: Span): Promise<Chunk[]> {
      return new Promise<Chunk[]>((resolve, reject) => {
        waiting.push({
          tabId: request.tabId,
          chunks: request.chunks,
          chunksJson: request.chunksJson,
          chunkIds: request.chunkIds,
          expectedSeq: request.expectedSeq,
          span,
          bytes: request.chunksJson.length,
          queuedAt: performance.now(),
          resolve,
          reject,
        });
        if (!pumpScheduled) pump();
      });
    },
    idle(): Promise<void> {
      if (inFlight === 0 && waiting.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
