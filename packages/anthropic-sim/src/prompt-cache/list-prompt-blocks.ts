import { createHash } from 'node:crypto';
import type {
  CacheControl,
  ContentBlockParam,
  CountTokensRequest,
} from '../request/messages-request';
import { canonicalJson } from './canonical-json';
import { estimateTokens } from './estimate-tokens';

/** One block of the prompt in cache-prefix order (tools → system → messages). */
export interface PromptBlock {
  segment: 'tools' | 'system' | 'messages';
  /** Where the block sits in the request body, e.g. `messages.3.content.1`. */
  path: string;
  tokens: number;
  /** Hash of the whole prefix up to and including this block: the cache key at this point. */
  prefixKey: string;
  /** The block's breakpoint, when it carries `cache_control`. */
  cacheControl?: CacheControl;
}

/**
 * Flattens a request into its prompt blocks with chained prefix hashes. The chain starts from
 * the model (caches are per model); thinking and tool_choice settings are mixed in where the
 * messages begin, since changing them invalidates the messages part but not tools or system.
 */
export function listPromptBlocks(request: CountTokensRequest): PromptBlock[] {
  const blocks: PromptBlock[] = [];
  let prefixKey = hash('', canonicalJson({ model: request.model }));
  const push = (
    segment: PromptBlock['segment'],
    path: string,
    hashed: unknown,
    measured: unknown,
    cacheControl: CacheControl | null | undefined,
  ) => {
    prefixKey = hash(prefixKey, canonicalJson(hashed));
    blocks.push({
      segment,
      path,
      tokens: estimateTokens(measured),
      prefixKey,
      ...(cacheControl ? { cacheControl } : {}),
    });
  };

  (request.tools ?? []).forEach((tool, index) => {
    push(
      'tools',
      `tools.${index}`,
      { tool, inputSchemaJson: jsonInWireOrder(tool.input_schema) },
      tool,
      tool.cache_control,
    );
  });

  const system = request.system;
  if (typeof system === 'string') {
    if (system.length > 0) push('system', 'system', textBlock(system), textBlock(system), null);
  } else if (system) {
    system.forEach((block, index) => {
      push('system', `system.${index}`, block, block, block.cache_control);
    });
  }

  prefixKey = hash(
    prefixKey,
    canonicalJson({ thinking: request.thinking ?? null, tool_choice: request.tool_choice ?? null }),
  );
  request.messages.forEach((message, messageIndex) => {
    const content: ContentBlockParam[] =
      typeof message.content === 'string' ? [textBlock(message.content)] : message.content;
    content.forEach((block, blockIndex) => {
      const path =
        typeof message.content === 'string'
          ? `messages.${messageIndex}.content`
          : `messages.${messageIndex}.content.${blockIndex}`;
      push(
        'messages',
        path,
        block.type === 'tool_use'
          ? { role: message.role, block, inputJson: jsonInWireOrder(block.input) }
          : { role: message.role, block },
        // A compaction block counts as its summary; its signature and encrypted content are
        // not prompt text.
        block.type === 'compaction' ? [block.content ?? '', block.tool_changes ?? []] : block,
        // Thinking blocks cannot carry a breakpoint; the validator rejects one that tries.
        block.type === 'thinking' || block.type === 'redacted_thinking'
          ? null
          : block.cache_control,
      );
    });
  });
  return blocks;
}

/**
 * JSON in the key order the request sent. The API renders tool inputs and input schemas into the
 * prompt as JSON, so their key order is part of the cached bytes: Anthropic's caching guide warns
 * that unstable key order in tool_use blocks breaks caches. Hashing them only in canonical form
 * would let a builder that reorders keys pass here and miss the real cache.
 */
function jsonInWireOrder(value: unknown): string {
  return JSON.stringify(value);
}

function textBlock(text: string): ContentBlockParam {
  return { type: 'text', text };
}

function hash(previous: string, next: string): string {
  return createHash('sha256').update(previous).update('\n').update(next).digest('hex');
}
