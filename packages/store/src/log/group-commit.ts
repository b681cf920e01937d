import type { Chunk } from '@chunklog/chunk-core';
import { type Span, trace } from '@opentelemetry/api';
import { mapDatabaseError, sqlState } from '../map-database-error';
import type { SqlClient } from '../sql-client';
import type { AppendMetrics } from './append-metrics';
import { type ChunkRow, chunkFromRow } from './chunk-row';
import { type BatchLimits, takeBatch } from './take-batch';

/** A validated append, as chunklog_append takes it. */
export interface AppendRequest {
  tabId: string;
  chunksJson: string;
  /** Its chunks' ids, in order. */
  chunkIds: string[];
  expectedSeq: number | null;
}

interface Waiting extends AppendRequest {
  bytes: number;
  queuedAt: number;
  /** The caller's append span, told the batch it committed in. */
  span: Span | undefined;
  resolve(chunks: Chunk[]): void;
  reject(error: unknown): void;
}

interface BatchRow extends ChunkRow {
  item: number;
  deferred: boolean;
}

export interface GroupCommitOptions {
  /** Batches in flight at once (database connections appends use). */
  lanes: number;
  limits: BatchLimits;
  metrics: AppendMetrics;
}

/**
 * Errors the database raised about the batch's statement itself, after which the batch is known
 * to have written nothing and its appends are made one by one, each getting its own answer: a
 * chunk id inserted by a concurrent append to another tab between the batch's check and its
 * insert (unique violation), a deadlock through such a wait, or one append's data refused by the
 * database (data exceptions, constraint violations, chunklog's own codes). A lost connection or
 * a server fault is none of these: the whole batch fails with it.
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
  append(request: AppendRequest): Promise<Chunk[]>;
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

  async function appendOne(request: AppendRequest): Promise<Chunk[]> {
    try {
      const rows = await client.query<ChunkRow>(
        'SELECT * FROM chunklog_append($1, $2::jsonb, $3)',
        [request.tabId, request.chunksJson, request.expectedSeq],
        'chunklog_append',
      );
      return rows.map((row) => chunkFromRow(request.tabId, row));
    } catch (error) {
      throw mapDatabaseError(error, 'append');
    }
  }

  async function settleOne(item: Waiting): Promise<void> {
    try {
      item.resolve(await appendOne(item));
    } catch (error) {
      item.reject(error);
    }
  }

  async function runBatch(batch: Waiting[]): Promise<void> {
    let rows: BatchRow[];
    try {
      rows = await client.query<BatchRow>(
        'SELECT * FROM chunklog_append_batch($1::uuid[], $2::jsonb, $3::bigint[])',
        [
          `{${batch.map((item) => item.tabId).join(',')}}`,
          `[${batch.map((item) => item.chunksJson).join(',')}]`,
          `{${batch.map((item) => item.expectedSeq ?? 'NULL').join(',')}}`,
        ],
        'chunklog_append_batch',
      );
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
    // Stored rows come back by chunk id (no chunk id is in two appends of one batch); a
    // deferred append by its place in the batch.
    const itemOfChunk = new Map<string, number>();
    for (const [index, item] of batch.entries()) {
      for (const id of item.chunkIds) itemOfChunk.set(id, index);
    }
    const stored = batch.map((): ChunkRow[] => []);
    const deferred = new Set<number>();
    for (const row of rows) {
      if (row.deferred) deferred.add(row.item - 1);
      else stored[itemOfChunk.get(row.id) ?? -1]?.push(row);
    }
    for (const [index, item] of batch.entries()) {
      if (deferred.has(index)) continue;
      const chunks = stored[index]!.map((row) => chunkFromRow(item.tabId, row));
      item.resolve(chunks.sort((left, right) => left.seq - right.seq));
    }
    // In call order, after the batch committed: each gets exactly its answer alone.
    for (const [index, item] of batch.entries()) {
      if (deferred.has(index)) await settleOne(item);
    }
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
        item.span?.setAttributes({
          'chunklog.append.batch_size': batch.length,
          'chunklog.append.queue_wait_ms': started - item.queuedAt,
        });
      }
      options.metrics.batch(batch.length);
      const run = batch.length === 1 ? settleOne(batch[0]!) : runBatch(batch);
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
    append(request: AppendRequest): Promise<Chunk[]> {
      return new Promise<Chunk[]>((resolve, reject) => {
        waiting.push({
          ...request,
          bytes: request.chunksJson.length,
          queuedAt: performance.now(),
          span: trace.getActiveSpan(),
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
