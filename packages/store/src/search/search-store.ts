import {
  ChunkRoleSchema,
  ChunkTypeSchema,
  InvalidInputError,
  maxSearchLimit,
  maxSearchQueryLength,
  NotFoundError,
  type SearchHit,
  type SearchPage,
} from '@chunklog/chunk-core';
import { z } from 'zod';
import { type BigintValue, IdSchema, noNul, parse, TenantIdSchema } from '../input';
import type { RunStatement } from '../sql-client';

/** Full-text search over a tenant's tabs: chunk text and tab titles (docs/architecture.md, "Search"). */
export interface SearchStore {
  /**
   * The tenant's chunks and tab titles matching `q` (websearch_to_tsquery syntax: words,
   * "quoted phrases", `or`, `-excluded`), best ranked first. Throws InvalidInputError for a
   * query without searchable words or a malformed cursor, NotFoundError for a `tabId` that is
   * not the tenant's.
   */
  search(tenantId: string, options: SearchOptions): Promise<SearchPage>;
}

export interface SearchOptions {
  q: string;
  /** Only this tab's chunks and title. */
  tabId?: string;
  /** Only chunks of this role (title hits are left out). */
  role?: z.infer<typeof ChunkRoleSchema>;
  /** Only chunks of this type (title hits are left out). */
  type?: z.infer<typeof ChunkTypeSchema>;
  /** Epoch ms: created at or after. */
  from?: number;
  /** Epoch ms: created before. */
  to?: number;
  /** 1..100. */
  limit: number;
  /** The previous page's nextCursor. */
  cursor?: string;
}

/** A text search configuration's name: an identifier, so it can stand in the SQL text. */
export const SearchConfigSchema = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a text search configuration name (lowercase identifier)');

const SearchOptionsSchema = z
  .object({
    q: z
      .string()
      .trim()
      .min(1, 'the query is empty')
      .max(maxSearchQueryLength, `the query is longer than ${maxSearchQueryLength} characters`)
      .refine(noNul, 'the query must not contain NUL (\\u0000)'),
    tabId: IdSchema.optional(),
    role: ChunkRoleSchema.optional(),
    type: ChunkTypeSchema.optional(),
    from: z.number().int().nonnegative().optional(),
    to: z.number().int().nonnegative().optional(),
    limit: z.number().int().min(1).max(maxSearchLimit),
    cursor: z.string().max(1000).optional(),
  })
  .strict();

const SearchCursorSchema = z.object({
  rank: z.number(),
  tabId: z.uuid(),
  seq: z.number().int().nonnegative(),
});
type SearchCursor = z.infer<typeof SearchCursorSchema>;

function encodeCursor(cursor: SearchCursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): SearchCursor {
  try {
    return SearchCursorSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch (error) {
    throw new InvalidInputError('malformed search cursor', { cause: error });
  }
}

// Private-use characters mark the matches in ts_headline's output; they are removed from the
// text first, so every one in the output is a marker.
const markStart = '\uE000';
const markStop = '\uE001';

const htmlEscapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** ts_headline's output as HTML: everything escaped, the markers turned into <mark> elements. */
export function snippetHtml(headline: string): string {
  return headline
    .replace(/[&<>"']/g, (character) => htmlEscapes[character] ?? character)
    .replaceAll(markStart, '<mark>')
    .replaceAll(markStop, '</mark>');
}

interface HitRow extends Record<string, unknown> {
  tab_id: string;
  title: string;
  seq: BigintValue;
  id: string | null;
  role: string | null;
  type: string | null;
  created_at_ms: number;
  rank: number;
  snippet: string;
}

export function createSqlSearchStore(run: RunStatement, config: string): SearchStore {
  const searchConfig = parse(SearchConfigSchema, config, 'search configuration');
  // The configuration stands in the text (validated above) rather than as a parameter: the
  // planner matches the query's expression against the index's only when it is a constant.
  const cfg = `'${searchConfig}'::regconfig`;
  const vector = `to_tsvector(${cfg}, chunklog_search_text(c.type, c.data))`;
  const query = `websearch_to_tsquery(${cfg}, $2)`;
  const headlineOptions = `StartSel=${markStart}, StopSel=${markStop}, MaxWords=30, MinWords=12`;
  // The matching chunks come from one scan of the GIN index, materialized before they meet the
  // tenant's tabs: joined the other way round, the planner may probe the index once per tab.
  const searchText = `
    WITH matched AS MATERIALIZED (
      SELECT c.tab_id, c.seq, c.id, c.role, c.type, c.data, c.created_at
      FROM chunks c
      WHERE ${vector} @@ ${query}
        AND ($3::uuid IS NULL OR c.tab_id = $3::uuid)
        AND ($4::text IS NULL OR c.role = $4::text)
        AND ($5::text IS NULL OR c.type = $5::text)
        AND ($6::timestamptz IS NULL OR c.created_at >= $6::timestamptz)
        AND ($7::timestamptz IS NULL OR c.created_at < $7::timestamptz)
    )
    SELECT p.tab_id, p.title, p.seq, p.id, p.role, p.type, p.rank,
      floor(extract(epoch FROM p.created_at) * 1000)::double precision AS created_at_ms,
      ts_headline(${cfg}, translate(p.body, '${markStart}${markStop}', ''), ${query},
        '${headlineOptions}') AS snippet
    FROM (
      SELECT h.* FROM (
        SELECT c.tab_id, t.title, c.seq, c.id, c.role, c.type, c.created_at,
          ts_rank(${vector}, ${query})::double precision AS rank,
          chunklog_search_text(c.type, c.data) AS body
        FROM matched c JOIN tabs t ON t.id = c.tab_id
        WHERE t.tenant_id = $1
        UNION ALL
        SELECT t.id, t.title, 0, NULL, NULL, NULL, t.created_at,
          ts_rank(to_tsvector(${cfg}, t.title), ${query})::double precision, t.title
        FROM tabs t
        WHERE t.tenant_id = $1 AND $4::text IS NULL AND $5::text IS NULL
          AND to_tsvector(${cfg}, t.title) @@ ${query}
          AND ($3::uuid IS NULL OR t.id = $3::uuid)
          AND ($6::timestamptz IS NULL OR t.created_at >= $6::timestamptz)
          AND ($7::timestamptz IS NULL OR t.created_at < $7::timestamptz)
      ) h
      WHERE $8::double precision IS NULL OR h.rank < $8::double precision
        OR (h.rank = $8::double precision AND (h.tab_id, h.seq) > ($9::uuid, $10::bigint))
      ORDER BY h.rank DESC, h.tab_id, h.seq
      LIMIT $11
    ) p
    ORDER BY p.rank DESC, p.tab_id, p.seq`;

  return {
    async search(tenantId, options) {
      const tenant = parse(TenantIdSchema, tenantId, 'tenant id');
      const parsed = parse(SearchOptionsSchema, options, 'search');
      const after = parsed.cursor === undefined ? null : decodeCursor(parsed.cursor);
      const [check] = await run<{ nodes: number; tab_found: boolean }>(
        'check search',
        `SELECT numnode(${query}) AS nodes,
           ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM tabs WHERE id = $3::uuid AND tenant_id = $1))
             AS tab_found`,
        [tenant, parsed.q, parsed.tabId ?? null],
      );
      if (check?.tab_found !== true) throw new NotFoundError(`tab ${parsed.tabId} not found`);
      if (Number(check.nodes) === 0) {
        throw new InvalidInputError('the query has no searchable words');
      }
      const rows = await run<HitRow>('search', searchText, [
        tenant,
        parsed.q,
        parsed.tabId ?? null,
        parsed.role ?? null,
        parsed.type ?? null,
        parsed.from === undefined ? null : new Date(parsed.from).toISOString(),
        parsed.to === undefined ? null : new Date(parsed.to).toISOString(),
        after?.rank ?? null,
        after?.tabId ?? null,
        after?.seq ?? null,
        parsed.limit + 1,
      ]);
      const page = rows.slice(0, parsed.limit);
      const last = page.at(-1);
      return {
        hits: page.map(hitFromRow),
        nextCursor:
          rows.length > parsed.limit && last !== undefined
            ? encodeCursor({ rank: Number(last.rank), tabId: last.tab_id, seq: Number(last.seq) })
            : null,
      };
    },
  };
}

function hitFromRow(row: HitRow): SearchHit {
  const title = row.id === null;
  return {
    kind: title ? 'title' : 'chunk',
    tabId: row.tab_id,
    tabTitle: row.title,
    seq: title ? null : Number(row.seq),
    chunkId: row.id,
    role: row.role,
    type: row.type,
    createdAt: row.created_at_ms,
    snippet: snippetHtml(row.snippet),
  } as SearchHit;
}
