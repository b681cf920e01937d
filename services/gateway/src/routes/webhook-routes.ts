import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../auth/auth-plugin';
import {
  CreateWebhookBodySchema,
  DeliveriesQuerySchema,
  DeliveryListResponseSchema,
  errorResponses,
  IdempotencyHeadersSchema,
  WebhookEndpointParamsSchema,
  WebhookListResponseSchema,
  WebhookWithSecretResponseSchema,
} from '../http/api-schemas';
import { beginIdempotentRequest, sendReplay } from '../idempotency/begin-idempotent-request';
import { idempotentWebhookId } from '../idempotency/idempotent-webhook-id';
import { checkWebhookUrl } from './check-outbound-hosts';
import type { GatewayContext } from './gateway-context';
import { newWebhookSecret } from './new-webhook-secret';

/**
 * The caller's webhook endpoints and their deliveries (docs/architecture.md, "Webhooks"). The
 * server makes each secret and shows it once, at creation and at rotation.
 */
export const webhookRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store } = context;

  app.post(
    '/v1/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        operationId: 'createWebhook',
        summary: 'Create a webhook endpoint; the answer holds its signing secret, shown only here',
        description:
          'With an Idempotency-Key, a retry with the same body returns the same endpoint and secret (201, Idempotent-Replayed: true) instead of creating another. A URL whose host is an address that is not public (private, loopback, link-local, carrier-grade NAT, unique-local, multicast, reserved, or an IPv6 form of one) or localhost is refused with 400 unless the deployment\'s WEBHOOK_ALLOWED_HOSTS opens it; a host name is checked by the addresses it resolves to at each delivery, and a delivery to a refused one fails with "the endpoint\'s address is not allowed".',
        headers: IdempotencyHeadersSchema,
        body: CreateWebhookBodySchema,
        response: {
          201: WebhookWithSecretResponseSchema,
          ...errorResponses(400, 401, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const { url, eventTypes } = request.body;
      checkWebhookUrl(url, context.webhookHosts);
      const idempotencyKey = request.headers['idempotency-key'];
      const idempotent = await beginIdempotentRequest(store, request.log, {
        tenantId,
        scope: 'POST /v1/webhooks',
        key: idempotencyKey,
        body: { url, eventTypes },
        success: { status: 201, schema: WebhookWithSecretResponseSchema },
      });
      if (idempotent.storedAnswer) return sendReplay(reply, 201, idempotent.storedAnswer);
      const created = await store.createWebhookEndpoint({
        tenantId,
        url,
        eventTypes,
        secret: newWebhookSecret(),
        // Derived from the key: a retry after a create whose answer was lost finds that
        // endpoint, and answers the secret it signs with.
        ...(idempotencyKey === undefined
          ? {}
          : { id: idempotentWebhookId(tenantId, idempotencyKey) }),
      });
      await idempotent.complete(created);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhooks',
        summary: "The caller's webhook endpoints, oldest first (without their secrets)",
        response: { 200: WebhookListResponseSchema, ...errorResponses(401, 429) },
      },
    },
    async (request) => ({ endpoints: await store.listWebhookEndpoints(tenantOf(request)) }),
  );

  app.delete(
    '/v1/webhooks/:endpointId',
    {
      schema: {
        tags: ['webhooks'],
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint and its deliveries, pending ones included',
        params: WebhookEndpointParamsSchema,
        response: { 204: z.null(), ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      await store.deleteWebhookEndpoint(request.params.endpointId, {
        tenantId: tenantOf(request),
      });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/webhooks/:endpointId/rotate-secret',
    {
      schema: {
        tags: ['webhooks'],
        operationId: 'rotateWebhookSecret',
        summary:
          'Replace the signing secret; attempts from now on are signed with the new one, shown only here',
        params: WebhookEndpointParamsSchema,
        response: {
          200: WebhookWithSecretResponseSchema,
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request) => {
      const secret = newWebhookSecret();
      const endpoint = await store.rotateWebhookSecret(request.params.endpointId, {
        tenantId: tenantOf(request),
        secret,
      });
      return { endpoint, secret };
    },
  );

  app.get(
    '/v1/webhooks/:endpointId/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookDeliveries',
        summary:
          "An endpoint's latest deliveries, newest first: status, attempts, last answer or error, next attempt",
        params: WebhookEndpointParamsSchema,
        querystring: DeliveriesQuerySchema,
        response: { 200: DeliveryListResponseSchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => ({
      deliveries: await store.listWebhookDeliveries(request.params.endpointId, {
        tenantId: tenantOf(request),
        limit: request.query.limit,
      }),
    }),
  );
};
