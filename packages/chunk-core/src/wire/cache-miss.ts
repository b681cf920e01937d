/**
 * Why a step's request missed the prompt cache, as the API's cache diagnostics said
 * (`diagnostics.cache_miss_reason` of the response, asked with `diagnostics.previous_message_id`
 * naming the tab's previous step response). The worker records it on the first chunk the step
 * seals, so the log says which step missed and why, and `/context` lists the latest ones.
 */
import { z } from 'zod';

/**
 * A recorded miss. `reason` is the API's `cache_miss_reason.type` (`messages_changed`,
 * `system_changed`, `tools_changed`, `model_changed`, `previous_message_not_found`,
 * `unavailable`); kept as a string, so a reason the API adds later is still stored.
 */
export const CacheMissSchema = z.object({
  reason: z.string().min(1).max(100),
  /** `cache_missed_input_tokens`: the tokens of the earlier prompt the request could not read. */
  missedInputTokens: z.number().int().nonnegative().optional(),
});
export type CacheMiss = z.infer<typeof CacheMissSchema>;

/**
 * The recorded miss of a response's message (`diagnostics.cache_miss_reason`), or undefined when
 * the response reports none (the cache was read in full, or diagnostics were not asked for).
 */
export function cacheMissOfMessage(message: object): CacheMiss | undefined {
  const diagnostics = (message as { diagnostics?: unknown }).diagnostics;
  if (typeof diagnostics !== 'object' || diagnostics === null) return undefined;
  const reason = (diagnostics as { cache_miss_reason?: unknown }).cache_miss_reason;
  if (typeof reason !== 'object' || reason === null) return undefined;
  const { type, cache_missed_input_tokens: missed } = reason as {
    type?: unknown;
    cache_missed_input_tokens?: unknown;
  };
  const parsed = CacheMissSchema.safeParse({
    reason: type,
    ...(typeof missed === 'number' ? { missedInputTokens: missed } : {}),
  });
  return parsed.success ? parsed.data : undefined;
}

/** A step's cache miss, placed in the log. */
export type StepCacheMiss = CacheMiss & { seq: number; turnId: string; step: number };

/** What `listCacheMisses` reads of a chunk. */
type MissCarrier = {
  seq: number;
  turnId: string;
  step: number;
  data: unknown;
};

/** The latest `limit` recorded misses of `chunks` (in seq order), oldest first. */
export function listCacheMisses(chunks: readonly MissCarrier[], limit = 20): StepCacheMiss[] {
  const found: StepCacheMiss[] = [];
  for (let index = chunks.length - 1; index >= 0 && found.length < limit; index -= 1) {
    const chunk = chunks[index];
    const miss = (chunk?.data as { cacheMiss?: CacheMiss } | undefined)?.cacheMiss;
    if (chunk === undefined || miss === undefined) continue;
    found.push({ seq: chunk.seq, turnId: chunk.turnId, step: chunk.step, ...miss });
  }
  return found.reverse();
}
