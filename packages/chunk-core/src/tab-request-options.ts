import type { RequestOptions } from './build-request';
import type { TabConfig } from './tab';

/** What a deployment uses where a tab's config leaves the model or token limit unset. */
export interface TabRequestDefaults {
  model: string;
  maxTokens: number;
}

/**
 * A tab's settings over the deployment's defaults, as request options. The worker and the
 * gateway's `/context` both use it, so the request a client inspects is the one the worker sends.
 */
export function tabRequestOptions(config: TabConfig, defaults: TabRequestDefaults): RequestOptions {
  const maxTokens = config.maxTokens ?? defaults.maxTokens;
  return {
    model: config.model ?? defaults.model,
    // The API wants max_tokens above the thinking budget; a tab setting both too low still works.
    maxTokens: config.thinking
      ? Math.max(maxTokens, config.thinking.budgetTokens + 1024)
      : maxTokens,
    ...(config.system ? { system: config.system } : {}),
    ...(config.thinking ? { thinking: config.thinking } : {}),
  };
}
