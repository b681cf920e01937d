import type { Usage } from '@chunklog/chunk-core';
import type { Attributes } from '@opentelemetry/api';

/**
 * The OpenTelemetry GenAI attribute names the worker's spans use. Copied rather than imported
 * from `@opentelemetry/semantic-conventions/incubating`, as that package advises for conventions
 * still in development, whose names may change between its releases.
 */
export const GEN_AI = {
  system: 'gen_ai.system',
  providerName: 'gen_ai.provider.name',
  operationName: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  conversationId: 'gen_ai.conversation.id',
} as const;

/** A model call's token usage as GenAI attributes (input tokens exclude cache reads and writes). */
export function usageAttributes(usage: Usage): Attributes {
  return {
    [GEN_AI.usageInputTokens]: usage.inputTokens,
    [GEN_AI.usageOutputTokens]: usage.outputTokens,
    [GEN_AI.usageCacheReadInputTokens]: usage.cacheReadInputTokens,
    [GEN_AI.usageCacheCreationInputTokens]: usage.cacheCreationInputTokens,
  };
}
