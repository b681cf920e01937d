import {
  buildRequest,
  defaultRequestDefaults,
  type TabRequestDefaults,
  tabRequestOptions,
} from '@chunklog/chunk-core';
import type { ContextBuilder } from './context-builder';

/** The worker's defaults (MODEL, MAX_TOKENS) when a tab's config leaves them unset. */
export type ContextDefaults = TabRequestDefaults;

export const defaultContextDefaults: ContextDefaults = defaultRequestDefaults;

/**
 * chunk-core's cache-stable builder with the tab's settings over the gateway's own defaults, and
 * no tools: the tool registry lives in the workers. What `/context` falls back to when no worker
 * answers (see createWorkerContextBuilder).
 */
export function createDefaultContextBuilder(
  defaults: ContextDefaults = defaultContextDefaults,
): ContextBuilder {
  return ({ tab, chunks }) => ({
    request: buildRequest({ chunks, ...tabRequestOptions(tab.config, defaults) }),
    source: 'gateway-defaults',
  });
}
