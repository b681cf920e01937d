/**
 * Native compaction (beta `compact-2026-09-04`): the API answers one signed `compaction` block
 * that later requests send back verbatim first; in the log it is a chunk of its own, with the
 * seq of the last chunk it summarizes (packages/chunk-core/README.md, "Compaction").
 */
import { z } from 'zod';

/** The `anthropic-beta` value that enables the `compaction` parameter and block. */
export const COMPACTION_BETA = 'compact-2026-09-04';

/** The `compaction` request parameter (the SDK's `BetaCompactionConfig`). */
export const CompactionConfigSchema = z.object({
  type: z.literal('summarize'),
  /** Replaces the server's summarization prompt; empty or whitespace-only counts as absent. */
  instructions: z.string().nullish(),
});
export type CompactionConfig = z.infer<typeof CompactionConfigSchema>;

/**
 * A `compaction` block as the API returns it (the SDK's `BetaCompactionBlock`) and as it is sent
 * back. Unknown fields are kept, so a block round-trips whatever the API adds to it. A block
 * whose `content` is null is a failed compaction the API treats as a no-op: it summarizes
 * nothing, so it is never stored as a chunk.
 */
export const CompactionBlockSchema = z.looseObject({
  type: z.literal('compaction'),
  content: z.string().min(1),
  encrypted_content: z.string().nullable(),
  signature: z.string().nullish(),
  /** `tool_addition` / `tool_removal` entries, or `[]`; sent back unchanged. */
  tool_changes: z.array(z.looseObject({ type: z.string() })).nullish(),
});
export type CompactionBlock = z.infer<typeof CompactionBlockSchema>;

/** The data of a `compaction` chunk. */
export const CompactionDataSchema = z.object({
  /** The block exactly as the API returned it. */
  block: CompactionBlockSchema,
  /**
   * The seq of the last chunk the block summarizes: requests built after it send the block,
   * then the chunks above this seq. Chunks appended while the compaction ran stay after it.
   */
  throughSeq: z.number().int().nonnegative(),
});
export type CompactionData = z.infer<typeof CompactionDataSchema>;

/**
 * The `error.details.error_code` values of the API's compaction refusals. All are 400
 * `invalid_request_error` except `compaction_unavailable`, a 529 `overloaded_error` to retry.
 */
export const CompactionErrorCodeSchema = z.enum([
  'compaction_block_ambiguous',
  'compaction_block_misplaced',
  'compaction_content_mismatch',
  'compaction_incomplete_turn',
  'compaction_nothing_to_summarize',
  'compaction_signature_invalid',
  'compaction_tool_changes_mismatch',
  'compaction_unavailable',
]);
export type CompactionErrorCode = z.infer<typeof CompactionErrorCodeSchema>;

/**
 * The compaction block of a Messages API response (non-streaming, or the SDK's final message of
 * a stream): the body of the chunk to append, or undefined when the response holds none with
 * content (a failed compaction, which the caller retries or gives up on; nothing is stored).
 */
export function compactionDataFromResponse(
  response: { content: readonly unknown[] },
  throughSeq: number,
): CompactionData | undefined {
  for (const block of response.content) {
    const parsed = CompactionBlockSchema.safeParse(block);
    if (parsed.success) return { block: parsed.data, throughSeq };
  }
  return undefined;
}
