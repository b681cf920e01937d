import type { Bus, Subscription } from '@chunklog/bus';
import {
  InvalidInputError,
  REQUEST_OPTIONS_QUEUE,
  REQUEST_OPTIONS_SUBJECT,
  type RequestOptions,
  RequestOptionsQuerySchema,
  type TabConfig,
} from '@chunklog/chunk-core';

/**
 * Answers the gateway's `/context` queries on the bus: the options a tab's step requests are
 * built from. Any worker answers for any tab (a queue group): the options depend on the tab's
 * config, not on its holder.
 */
export function serveRequestOptions(
  bus: Bus,
  optionsFor: (query: { tabId: string; config: TabConfig }) => Promise<RequestOptions>,
): Promise<Subscription> {
  return bus.serve(
    REQUEST_OPTIONS_SUBJECT,
    async (payload) => {
      const query = RequestOptionsQuerySchema.safeParse(payload);
      if (!query.success) {
        throw new InvalidInputError(`Malformed request-options query: ${query.error.message}`);
      }
      return { options: await optionsFor(query.data) };
    },
    { queue: REQUEST_OPTIONS_QUEUE },
  );
}
