import { type Chunk, type ChunkPage, type NewChunk, NotFoundError } from '@chunklog/chunk-core';
import { inLeafSpan, tracingActive } from '@chunklog/runtime';
import { SpanKind } from '@opentelemetry/api';
import { z } from 'zod';
import { type BigintValue, maxPageLimit, parse, requireTabId } from '../input';
import type { RunStatement } from '../sql-client';
import { type ChunkRow, chunkColumns, chunkFromRow } from './chunk-row';
import type { AppendRequest, GroupCommit } from './group-commit';
import { type PageRange, pageStatement, segmentsOf } from './page-statement';
import { validateAppend } from './validate-append';

export interface PageOptions {
  /** Chunks with seq < before, the newest of them (default: from the tail). */
  before?: number;
  /** Chunks with seq > after, the oldest of them. Exclusive with before. */
  after?: number;
  /** 1..500. */
  limit: number;
}

export interface AppendOptions {
  /** The seq the first chunk must get; otherwise the append fails with ConflictError. */
  expectedSeq?: number;
}

/** Reads of a tab's log: what a component that never writes one (the gateway) is given. */
export interface ChunkReader {
  page(tabId: string, options: PageOptions): Promise<ChunkPage>;
  /** Every chunk of a tab in seq order. */
  readAll(tabId: string): Promise<Chunk[]>;
  /**
   * What a request of the tab is built from (the worker's history read): the chunks above the
   * latest compaction's `throughSeq`, in seq order, that compaction included; every chunk when
   * the tab has none. Its cost follows the chunks since the latest compaction, not the tab's
   * depth.
   */
  readFromLatestCompaction(tabId: string): Promise<Chunk[]>;
}

/** A tab's append-only log of chunks, ordered by a gap-free per-tab seq. */
export interface ChunkLog extends ChunkReader {
  /**
   * Appends chunks with contiguous seqs, committed together; idempotent by chunk id (a chunk
   * already in the tab is answered with the stored one). Concurrent appends to one tab get
   * seqs in the order they were called.
   */
  append(tabId: string, chunks: NewChunk[], options?: AppendOptions): Promise<Chunk[]>;
}

const PageOptionsSchema = z
  .object({
    before: z.number().int().positive().optional(),
    after: z.number().int().nonnegative().optional(),
    limit: z.number().int().min(1).max(maxPageLimit),
  })
  .strict()
  .refine((options) => options.before === undefined || options.after === undefined, {
    message: 'before and after are exclusive',
  });

interface PageRow extends ChunkRow {
  highest_seq: BigintValue | null;
  lowest_seq: BigintValue | null;
}

export function createSqlChunkLog(run: RunStatement, groupCommit: GroupCommit): ChunkLog {
  return {
    // Not async: the append's promise is the group commit's own (an async wrapper would add a
    // promise and turns of the microtask queue to every append). Bad input rejects it alike.
    append(tabId, chunks, options) {
      let request: AppendRequest;
      try {
        request = validateAppend(requireTabId(tabId), chunks, options);
      } catch (error) {
        return Promise.reject(error);
      }
      if (!tracingActive()) return groupCommit.append(request);
      // One span per append, whether it commits alone or in a group commit's batch (the batch's
      // size is on the span): the trace shows each writer's wait and commit. A leaf: nothing
      // below it starts spans, so it is never made the active one.
      return inLeafSpan(
        'chunklog.store.append',
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'db.system.name': 'postgresql',
            'db.operation.name': 'chunklog_append',
            'chunklog.tab_id': request.tabId,
            'chunklog.append.chunks': request.chunkIds.length,
          },
        },
        (span) => groupCommit.append(request, span),
      );
    },

    async page(tabId, options): Promise<ChunkPage> {
      const id = requireTabId(tabId);
      const { before, after, limit } = parse(PageOptionsSchema, options, 'page options');
      const range: PageRange =
        after !== undefined
          ? { kind: 'after', seq: after }
          : before !== undefined
            ? { kind: 'before', seq: before }
            : { kind: 'tail' };
      // One extra row tells whether more chunks lie beyond the page.
      const statement = pageStatement(id, limit + 1, range);
      const rows = await run<PageRow>('page', statement.text, statement.values, statement.name);
      const first = rows[0];
      if (first === undefined) throw new NotFoundError(`tab ${id} not found`);
      const found = rows.filter((row) => row.id !== null);
      const page = found.slice(0, limit);
      if (statement.descending) page.reverse();
      return {
        chunks: page.map((row) => chunkFromRow(id, row)),
        total:
          first.highest_seq === null || first.lowest_seq === null
            ? 0
            : Number(first.highest_seq) - Number(first.lowest_seq) + 1,
        hasMore: found.length > limit,
      };
    },

    async readAll(tabId): Promise<Chunk[]> {
      const id = requireTabId(tabId);
      const rows = await run<ChunkRow>(
        'read all',
        `WITH segments AS (${segmentsOf('$1')})
         SELECT ${chunkColumns}
         FROM tabs t LEFT JOIN LATERAL (
           SELECT c.* FROM segments g
           JOIN chunks c ON c.tab_id = g.tab_id AND c.seq > g.lo AND c.seq <= g.hi
         ) c ON true
         WHERE t.id = $1 ORDER BY c.seq`,
        [id],
      );
      if (rows.length === 0) throw new NotFoundError(`tab ${id} not found`);
      return rows.filter((row) => row.id !== null).map((row) => chunkFromRow(id, row));
    },

    async readFromLatestCompaction(tabId): Promise<Chunk[]> {
      const id = requireTabId(tabId);
      // The latest compaction, through the partial index on compaction chunks; then the range
      // above its cut as a separate statement, so the planner sees the bound and scans the
      // (tab_id, seq) index instead of the whole table.
      const [latest] = await run<{ through_seq: BigintValue | null }>(
        'find the latest compaction',
        `WITH segments AS (${segmentsOf('$1')})
         SELECT (k.data->>'throughSeq')::bigint AS through_seq
         FROM segments g, LATERAL (
           SELECT c.seq, c.data FROM chunks c
           WHERE c.tab_id = g.tab_id AND c.type = 'compaction' AND c.seq > g.lo AND c.seq <= g.hi
           ORDER BY c.seq DESC LIMIT 1) k
         ORDER BY k.seq DESC LIMIT 1`,
        [id],
      );
      const rows = await run<ChunkRow>(
        'read from the latest compaction',
        `WITH segments AS (${segmentsOf('$1')})
         SELECT ${chunkColumns}
         FROM tabs t LEFT JOIN LATERAL (
           SELECT c.* FROM segments g
           JOIN chunks c ON c.tab_id = g.tab_id AND c.seq > greatest(g.lo, $2::bigint) AND c.seq <= g.hi
         ) c ON true
         WHERE t.id = $1 ORDER BY c.seq`,
        [id, Number(latest?.through_seq ?? 0)],
      );
      if (rows.length === 0) throw new NotFoundError(`tab ${id} not found`);
      return rows.filter((row) => row.id !== null).map((row) => chunkFromRow(id, row));
    },
  };
}
