import { listCacheMisses } from '@chunklog/chunk-core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { tenantOf } from '../auth/auth-plugin';
import {
  ChunkPageResponseSchema,
  ChunksQuerySchema,
  ContextResponseSchema,
  errorResponses,
  TabIdParamsSchema,
} from '../http/api-schemas';
import type { GatewayContext } from './gateway-context';
import { pageAround } from './page-around';

/** Paged reads of a tab's log, and the request its next step would send. */
export const chunkRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store } = context;

  app.get(
    '/v1/tabs/:tabId/chunks',
    {
      schema: {
        tags: ['chunks'],
        operationId: 'listChunks',
        summary:
          'A page of chunks in ascending seq: from the tail, before a seq, after one, or around one',
        params: TabIdParamsSchema,
        querystring: ChunksQuerySchema,
        response: { 200: ChunkPageResponseSchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { tabId } = request.params;
      await store.getTab(tabId, { tenantId: tenantOf(request) });
      const { limit, before, after, around } = request.query;
      if (around !== undefined) return pageAround(store, tabId, around, limit);
      return store.page(tabId, { limit, before, after });
    },
  );

  app.get(
    '/v1/tabs/:tabId/context',
    {
      schema: {
        tags: ['chunks'],
        operationId: 'getTabContext',
        summary:
          'The Anthropic request the next step would send, and the latest steps that missed the prompt cache and why (for checking cache stability)',
        params: TabIdParamsSchema,
        response: { 200: ContextResponseSchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { tabId } = request.params;
      const tab = await store.getTab(tabId, { tenantId: tenantOf(request) });
      // From the latest compaction on: the request starts there, and so the read's cost follows
      // the chunks since then, not the tab's depth.
      const chunks = await store.readFromLatestCompaction(tabId);
      const built = await context.contextBuilder({ tab, chunks, logger: request.log });
      return { ...built, cacheMisses: listCacheMisses(chunks) };
    },
  );
};
