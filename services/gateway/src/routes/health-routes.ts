import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorResponseSchema, errorResponses, HealthResponseSchema } from '../http/api-schemas';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../http/error-handler';
import type { GatewayContext } from './gateway-context';

/** A tab id that never exists: asking for its tenant is a cheap real round trip to the store. */
const PROBE_TAB_ID = '00000000-0000-4000-8000-000000000000';

/** Liveness, readiness and Prometheus metrics; public, not rate limited. */
export const healthRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const config = { auth: 'public' as const, rateLimit: false as const };

  app.get(
    '/healthz',
    {
      config,
      schema: {
        tags: ['health'],
        operationId: 'getHealth',
        summary: 'Alive: the process answers',
        security: [],
        response: { 200: HealthResponseSchema, ...errorResponses() },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config,
      schema: {
        tags: ['health'],
        operationId: 'getReadiness',
        summary: 'Ready when the database and the bus are reachable',
        security: [],
        response: {
          200: HealthResponseSchema,
          500: errorResponses()[500],
          503: {
            description:
              'the database or the bus cannot be reached ({ status: unavailable }), or the gateway is shutting down (the error shape); Retry-After says when to try again',
            content: {
              'application/json': { schema: z.union([HealthResponseSchema, ErrorResponseSchema]) },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const [storeReady, busReady] = await Promise.all([
        context.store.tabTenant(PROBE_TAB_ID).then(
          () => true,
          (error) => {
            request.log.warn({ err: error }, 'store not ready');
            return false;
          },
        ),
        context.bus.ready().catch(() => false),
      ]);
      const ready = storeReady && busReady;
      if (ready) return reply.code(200).send({ status: 'ok' });
      // Like every 503 of the gateway: when to ask again.
      return reply
        .code(503)
        .header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS))
        .send({ status: 'unavailable' });
    },
  );

  app.get(
    '/metrics',
    {
      config,
      schema: {
        tags: ['health'],
        operationId: 'getMetrics',
        summary: 'Prometheus text exposition',
        security: [],
        response: {
          200: {
            description: 'the Prometheus text exposition format',
            content: { 'text/plain': { schema: z.string() } },
          },
          ...errorResponses(),
        },
      },
    },
    async (_request, reply) => {
      const registry = context.metrics.registry;
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
};
