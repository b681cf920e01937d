import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../auth/auth-plugin';
import {
  CreateTabBodySchema,
  errorResponses,
  ListTabsQuerySchema,
  RenameTabBodySchema,
  TabIdParamsSchema,
  TabListResponseSchema,
  TabResponseSchema,
} from '../http/api-schemas';
import type { GatewayContext } from './gateway-context';

/** Create, list, read, rename and delete tabs, always within the caller's tenant. */
export const tabRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store } = context;

  app.post(
    '/v1/tabs',
    {
      schema: {
        tags: ['tabs'],
        summary: 'Create a tab',
        body: CreateTabBodySchema,
        response: { 201: TabResponseSchema, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const tab = await store.createTab({
        tenantId: tenantOf(request),
        title: request.body?.title,
        config: request.body?.config,
      });
      return reply.code(201).send({ tab });
    },
  );

  app.get(
    '/v1/tabs',
    {
      schema: {
        tags: ['tabs'],
        summary: "The caller's tabs, newest first",
        querystring: ListTabsQuerySchema,
        response: { 200: TabListResponseSchema, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) =>
      store.listTabs(tenantOf(request), {
        limit: request.query.limit,
        cursor: request.query.cursor,
      }),
  );

  app.get(
    '/v1/tabs/:tabId',
    {
      schema: {
        tags: ['tabs'],
        summary: 'A tab with its status, active turn and last seq',
        params: TabIdParamsSchema,
        response: { 200: TabResponseSchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => ({
      tab: await store.getTab(request.params.tabId, { tenantId: tenantOf(request) }),
    }),
  );

  app.patch(
    '/v1/tabs/:tabId',
    {
      schema: {
        tags: ['tabs'],
        summary: 'Rename a tab (its title; the log and config do not change)',
        params: TabIdParamsSchema,
        body: RenameTabBodySchema,
        response: { 200: TabResponseSchema, ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request) => ({
      tab: await store.renameTab(request.params.tabId, {
        title: request.body.title,
        tenantId: tenantOf(request),
      }),
    }),
  );

  app.delete(
    '/v1/tabs/:tabId',
    {
      schema: {
        tags: ['tabs'],
        summary: 'Delete a tab and its chunks',
        params: TabIdParamsSchema,
        response: { 204: z.null(), ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      await store.deleteTab(request.params.tabId, { tenantId: tenantOf(request) });
      return reply.code(204).send(null);
    },
  );
};
