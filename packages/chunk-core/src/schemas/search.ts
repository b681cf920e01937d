import { z } from 'zod';
import { ChunkRoleSchema, ChunkTypeSchema } from './chunk';

/** The longest search query accepted, in characters. */
export const maxSearchQueryLength = 500;
/** The most hits a search page holds. */
export const maxSearchLimit = 100;

/**
 * One search hit: a chunk (kind `chunk`) or a tab's title (kind `title`: no seq, chunk, role
 * or type). The snippet is HTML-safe: the matched text with `&`, `<`, `>`, `"` and `'` escaped
 * and each matched word inside `<mark>`…`</mark>`, so a browser may set it as innerHTML.
 */
export const SearchHitSchema = z.object({
  kind: z.enum(['chunk', 'title']),
  tabId: z.uuid(),
  tabTitle: z.string(),
  seq: z.number().int().positive().nullable(),
  chunkId: z.uuid().nullable(),
  role: ChunkRoleSchema.nullable(),
  type: ChunkTypeSchema.nullable(),
  /** Epoch ms: the chunk's creation, or the tab's for a title hit. */
  createdAt: z.number().int().nonnegative(),
  snippet: z.string(),
});
export type SearchHit = z.infer<typeof SearchHitSchema>;

/** A page of hits, best first; `nextCursor` reads the next page (null: none). */
export const SearchPageSchema = z.object({
  hits: z.array(SearchHitSchema),
  nextCursor: z.string().nullable(),
});
export type SearchPage = z.infer<typeof SearchPageSchema>;
