import type { Bus } from '@chunklog/bus';
import {
  buildRequest,
  REQUEST_OPTIONS_SUBJECT,
  type RequestOptionsQuery,
  type RequestOptionsReply,
  RequestOptionsReplySchema,
} from '@chunklog/chunk-core';
import type { ContextBuilder } from './context-builder';
import {
  type ContextDefaults,
  createDefaultContextBuilder,
  defaultContextDefaults,
} from './default-context-builder';

/** How long `/context` waits for a worker before showing the gateway's defaults. */
export const WORKER_CONTEXT_TIMEOUT_MS = 2_000;

/**
 * `/context` as the workers would send it: a worker's request options (model, token defaults,
 * tools) over the bus, the messages built here from the log with the same builder. Without an
 * answer in time: the gateway's defaults without tools, said in `source`.
 */
export function createWorkerContextBuilder(input: {
  bus: Bus;
  /** The fallback's defaults (the gateway's MODEL and MAX_TOKENS). */
  defaults?: ContextDefaults;
  timeoutMs?: number;
}): ContextBuilder {
  const fallback = createDefaultContextBuilder(input.defaults ?? defaultContextDefaults);
  const timeoutMs = input.timeoutMs ?? WORKER_CONTEXT_TIMEOUT_MS;
  return async ({ tab, chunks, logger }) => {
    const query: RequestOptionsQuery = { tabId: tab.id, config: tab.config };
    let options: RequestOptionsReply['options'];
    try {
      const reply = await input.bus.request(REQUEST_OPTIONS_SUBJECT, query, { timeoutMs });
      options = RequestOptionsReplySchema.parse(reply).options;
    } catch (error) {
      // No worker running (no responders), none in time, or a reply this gateway cannot read.
      logger.warn(
        { tabId: tab.id, err: error },
        "no worker answered for /context: showing the gateway's defaults, without tools",
      );
      return fallback({ tab, chunks, logger });
    }
    return { request: buildRequest({ chunks, ...options }), source: 'worker' };
  };
}
