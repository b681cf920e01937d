import { ConflictError } from '@chunklog/chunk-core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../auth/auth-plugin';
import {
  CreateTabBodySchema,
  errorResponses,
  IdempotencyHeadersSchema,
  ListTabsQuerySchema,
  RenameTabBodySchema,
  TabIdParamsSchema,
  TabListResponseSchema,
  TabResponseSchema,
} from '../http/api-schemas';
import { beginIdempotentRequest, sendReplay } from '../idempotency/begin-idempotent-request';
import { idempotentTabId } from '../idempotency/idempotent-tab-id';
import { checkMcpSecretScopes } from './check-mcp-secret-scopes';
import { checkMcpServerUrls } from './check-outbound-hosts';
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
        operationId: 'createTab',
        summary: 'Create a tab',
        description:
          "With an Idempotency-Key, a retry with the same body returns the same tab (201, Idempotent-Replayed: true) instead of creating another. An MCP server naming a secret the caller's tenant may not use (MCP_SECRET_<NAME>_TENANTS, _ORIGINS) is refused with 400, and so is one whose URL holds an address that is not public (private, loopback, link-local, ...) and that MCP_TAB_HOSTS does not name. A tenant at its tab limit (TABS_PER_TENANT) gets 409 until it deletes tabs.",
        headers: IdempotencyHeadersSchema,
        body: CreateTabBodySchema,
        response: {
          201: TabResponseSchema,
          ...errorResponses(400, 401, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const title = request.body?.title;
      const config = request.body?.config;
      checkMcpServerUrls(config, context.mcpTabHosts);
      await checkMcpSecretScopes({
        store,
        tenantId,
        config,
        scopes: context.mcpSecretScopes,
        unlistedSecretsTenant: context.unlistedSecretsTenant,
      });
      const idempotencyKey = request.headers['idempotency-key'];
      const idempotent = await beginIdempotentRequest(store, request.log, {
        tenantId,
        scope: 'POST /v1/tabs',
        key: idempotencyKey,
        body: { title, config },
        success: { status: 201, schema: TabResponseSchema },
      });
      if (idempotent.storedAnswer) return sendReplay(reply, 201, idempotent.storedAnswer);
      const { tabsPerTenant } = context.limits;
      if ((await store.countTabs(tenantId, tabsPerTenant)) >= tabsPerTenant) {
        throw new ConflictError(
          `the tenant has ${tabsPerTenant} tabs, its limit: delete tabs to create more`,
        );
      }
      const tab = await store.createTab({
        tenantId,
        title,
        config,
        // Derived from the key: a retry after a create whose answer was lost finds that tab.
        ...(idempotencyKey === undefined ? {} : { id: idempotentTabId(tenantId, idempotencyKey) }),
      });
      const created = { tab };
      await idempotent.complete(created);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/tabs',
    {
      schema: {
        tags: ['tabs'],
        operationId: 'listTabs',
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
        operationId: 'getTab',
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
        operationId: 'renameTab',
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
        operationId: 'deleteTab',
        summary: 'Delete a tab and its chunks',
        params: TabIdParamsSchema,
        response: { 204: z.null(), ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      await store.deleteTab(request.params.tabId, { tenantId: tenantOf(request) });
      return reply.code(204).send(null);
    },
  );
};
