import { buildRequest } from '@chunklog/chunk-core';
import type { ContextBuilder } from './gateway-context';

/** The worker's defaults (MODEL, MAX_TOKENS) when a tab's config leaves them unset. */
export interface ContextDefaults {
  model: string;
  maxTokens: number;
}

export const defaultContextDefaults: ContextDefaults = {
  model: 'claude-sonnet-4-6',
  maxTokens: 4096,
};

/**
 * chunk-core's cache-stable builder with the tab's settings over the defaults, and no tools:
 * the tool registry lives in the worker, so a composed deployment that wants `/context` to show
 * tools passes its own builder (the worker's step request) instead.
 */
export function createDefaultContextBuilder(
  defaults: ContextDefaults = defaultContextDefaults,
): ContextBuilder {
  return ({ tab, chunks }) => {
    const { config } = tab;
    const maxTokens = config.maxTokens ?? defaults.maxTokens;
    return buildRequest({
      chunks,
      model: config.model ?? defaults.model,
      // Mirrors the worker: max_tokens must stay above the thinking budget.
      maxTokens: config.thinking
        ? Math.max(maxTokens, config.thinking.budgetTokens + 1024)
        : maxTokens,
      ...(config.system ? { system: config.system } : {}),
      ...(config.thinking ? { thinking: config.thinking } : {}),
    });
  };
}
