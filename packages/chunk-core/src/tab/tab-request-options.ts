import type { RequestOptions } from '../wire/build-request';
import { MAX_OUTPUT_TOKENS, type TabConfig } from './tab';

/** What a deployment uses where a tab's config leaves the model or token limit unset. */
export interface TabRequestDefaults {
  model: string;
  maxTokens: number;
}

/**
 * The defaults where the deployment sets none: MODEL and MAX_TOKENS unset, a worker given no
 * `maxTokens`, the gateway's `/context` when no worker answers.
 */
export const defaultRequestDefaults: Readonly<TabRequestDefaults> = {
  model: 'claude-sonnet-4-6',
  maxTokens: 4096,
};

/**
 * A tab's settings over the deployment's defaults, as request options. The worker and the
 * gateway's `/context` both use it, so the request a client inspects is the one the worker sends.
 */
export function tabRequestOptions(config: TabConfig, defaults: TabRequestDefaults): RequestOptions {
  return {
    model: config.model ?? defaults.model,
    maxTokens: maxTokensOf(config, defaults),
    ...(config.system ? { system: config.system } : {}),
    ...(config.thinking ? { thinking: config.thinking } : {}),
  };
}

/** Room the answer keeps after a full thinking budget when the tab sets no limit of its own. */
const ANSWER_ROOM_TOKENS = 1024;

/**
 * The API wants max_tokens above the thinking budget. A tab's own maxTokens is above it (the
 * schema requires that of new tabs) and is sent as is; where the deployment's default is used, or
 * a tab stored before that rule has a budget at or above its maxTokens, max_tokens is raised to
 * the budget plus room for the answer (at most MAX_OUTPUT_TOKENS, still above the budget).
 */
function maxTokensOf(config: TabConfig, defaults: TabRequestDefaults): number {
  const budget = config.thinking?.budgetTokens;
  if (budget === undefined) return config.maxTokens ?? defaults.maxTokens;
  if (config.maxTokens !== undefined && config.maxTokens > budget) return config.maxTokens;
  const roomy = Math.min(budget + ANSWER_ROOM_TOKENS, MAX_OUTPUT_TOKENS);
  return config.maxTokens === undefined ? Math.max(defaults.maxTokens, roomy) : roomy;
}
