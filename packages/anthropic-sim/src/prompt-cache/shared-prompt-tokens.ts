import { CountTokensRequestSchema } from '../request/messages-request';
import { listPromptBlocks } from './list-prompt-blocks';

/**
 * The most any prompt cache could read of `current`: the tokens of its prompt blocks (tools,
 * system, messages, in cache-prefix order) that `previous` sent in the same place, with the same
 * model and settings before them. Both are Messages request bodies as sent; `cache_control`
 * markers do not count as a difference. The yardstick for a cache read share: the actual read
 * over this is how much of the reusable prefix a client's requests let the cache reuse.
 */
export function sharedPromptTokens(previous: unknown, current: unknown): number {
  if (previous === undefined) return 0;
  const before = listPromptBlocks(CountTokensRequestSchema.parse(previous));
  const now = listPromptBlocks(CountTokensRequestSchema.parse(current));
  let tokens = 0;
  for (let index = 0; index < now.length; index += 1) {
    const block = now[index];
    if (block === undefined || block.prefixKey !== before[index]?.prefixKey) break;
    tokens += block.tokens;
  }
  return tokens;
}
