import { SearchPageSchema } from '@chunklog/chunk-core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { tenantOf } from '../auth/auth-plugin';
import { errorResponses, SearchQuerySchema } from '../http/api-schemas';
import type { GatewayContext } from './gateway-context';

/** Full-text search over the caller's tabs (docs/architecture.md, "Search"). */
export const searchRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store } = context;

  app.get(
    '/v1/search',
    {
      schema: {
        tags: ['search'],
        operationId: 'search',
        summary: "Search the tenant's chunks and tab titles, best match first, paged by a cursor",
        description:
          'Each hit names its tab and seq (open the tab there with GET /v1/tabs/{tabId}/chunks?around=SEQ) and carries an HTML-safe snippet: the text escaped, the matched words in <mark>…</mark>. A query that is empty, longer than 500 characters or without searchable words answers 400; a tabId that is not the tenant’s answers 404.',
        querystring: SearchQuerySchema,
        response: { 200: SearchPageSchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => store.search(tenantOf(request), request.query),
  );
};
