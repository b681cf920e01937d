import type Anthropic from '@anthropic-ai/sdk';
import { buildRequest, type Chunk, type TabConfig, type WireTool } from '@chunklog/chunk-core';

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
  const { config, defaults } = input;
  const maxTokens = config.maxTokens ?? defaults.maxTokens;
  const request = buildRequest({
    chunks: input.log,
    model: config.model ?? defaults.model,
    // The API wants max_tokens above the thinking budget; a tab setting both too low still works.
    maxTokens: config.thinking
      ? Math.max(maxTokens, config.thinking.budgetTokens + 1024)
      : maxTokens,
    tools: input.tools as readonly WireTool[],
    ...(config.system ? { system: config.system } : {}),
    ...(config.thinking ? { thinking: config.thinking } : {}),
  });
  // chunk-core types the wire without the SDK; the shapes are the SDK's, field for field.
  return request as Anthropic.MessageCreateParamsNonStreaming;
}
