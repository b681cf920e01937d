import type Anthropic from '@anthropic-ai/sdk';
import {
  buildRequest,
  type Chunk,
  type TabConfig,
  tabRequestOptions,
  type WireTool,
} from '@chunklog/chunk-core';

/**
 * The request for a tab's next step: the tab's settings over the worker's defaults, handed to
 * chunk-core's cache-stable builder (per-step fold, breakpoints on the tools, the system prompt
 * and the last two user messages).
 */
export function buildStepRequest(input: {
  log: readonly Chunk[];
  config: TabConfig;
  defaults: { model: string; maxTokens: number };
  tools: readonly Anthropic.Tool[];
}): Anthropic.MessageCreateParamsNonStreaming {
  const request = buildRequest({
    chunks: input.log,
    ...tabRequestOptions(input.config, input.defaults),
    tools: input.tools as readonly WireTool[],
  });
  // chunk-core types the wire without the SDK; the shapes are the SDK's, field for field.
  return request as Anthropic.MessageCreateParamsNonStreaming;
}
