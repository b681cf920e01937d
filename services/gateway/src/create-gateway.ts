import type { Bus } from '@chunklog/bus';
import { LOCAL_TENANT_NAME } from '@chunklog/chunk-core';
import { parseOutboundAllowlist } from '@chunklog/runtime/outbound-address';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyReply, LogController } from 'fastify';
import {
  createJsonSchemaTransform,
  createJsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { authPlugin } from './auth/auth-plugin';
import { createStreamTickets } from './auth/stream-ticket';
import { defaultGatewayLimits, type GatewayLimits } from './config/gateway-limits';
import type { ContextBuilder } from './context/context-builder';
import { createWorkerContextBuilder } from './context/worker-context-builder';
import { closingGuardPlugin } from './http/closing-guard';
import { type CorsOptions, corsPlugin } from './http/cors-plugin';
import { errorHandlerPlugin, sendError, toHttpError } from './http/error-handler';
import { gatewayVersion } from './http/gateway-version';
import { installJsonBodyParser } from './http/json-body-parser';
import { localOriginGuardPlugin } from './http/local-origin-guard';
import { openApiRegistry } from './http/openapi-registry';
import { oversizedBodyPlugin } from './http/oversized-body';
import { requestLogFields } from './http/redacted-url';
import { REQUEST_ID_HEADER, requestIdOf } from './http/request-id';
import { docsContentSecurityPolicy, securityHeadersPlugin } from './http/security-headers';
import { tracingPlugin } from './http/tracing-plugin';
import { withoutUnusedInputComponents } from './http/unused-components';
import { webAppPlugin } from './http/web-app-plugin';
import { createGatewayMetrics, type GatewayMetrics } from './metrics/gateway-metrics';
import { approvalRoutes } from './routes/approval-routes';
import { chunkRoutes } from './routes/chunk-routes';
import { forkRoutes } from './routes/fork-routes';
import type { GatewayContext, GatewayStore } from './routes/gateway-context';
import { healthRoutes } from './routes/health-routes';
import { messageRoutes } from './routes/message-routes';
import { searchRoutes } from './routes/search-routes';
import { streamRoutes } from './routes/stream-routes';
import { tabRoutes } from './routes/tab-routes';
import { webhookRoutes } from './routes/webhook-routes';
import { StreamSlots } from './streams/stream-slots';
import { TabEventHub } from './streams/tab-event-hub';

/** The tenant every request acts as when auth is off (all-in-one mode on loopback). */
export const LOCAL_TENANT_ID = '00000000-0000-4000-8000-00000000000a';

export interface GatewayOptions {
  store: GatewayStore;
  bus: Bus;
  /**
   * Where the gateway logs (pino), as a child with `component: 'http'`; HTTP lines carry
   * the request's `requestId`. Absent: nothing is logged.
   */
  logger?: Logger;
  /** Epoch ms; defaults to Date.now. */
  clock?: () => number;
  /**
   * Settles when the store may be used (the all-in-one's database opened and migrated): the
   * gateway's start-up waits for it before it first asks the store, so `ready()` can boot the
   * rest while the database opens. Absent: the store is usable now.
   */
  storeReady?: Promise<unknown>;
  /** `off` acts as one local tenant and serves loopback clients only. */
  auth: { mode: 'keys' | 'off'; localTenantId?: string };
  limits?: Partial<GatewayLimits>;
  /** HMAC secret of stream tickets; gateways behind one load balancer share it. */
  ticketSecret: string;
  /**
   * Builds `GET /context`'s request; the default asks the workers on the bus and falls back to
   * the default model and token limit, without tools, when none answers (services/gateway/README.md).
   */
  contextBuilder?: ContextBuilder;
  /** Registry `/metrics` serves; pass one to add the worker's metrics when composed in-process. */
  metricsRegistry?: Registry;
  /** Browser origins allowed to call the API (CORS); absent or empty: no CORS headers. */
  cors?: CorsOptions;
  /**
   * Where the scopes of MCP secrets (`MCP_SECRET_<NAME>_TENANTS`, `_ORIGINS`) are read, to
   * refuse a tab naming a secret its tenant may not use (default: process.env). A secret
   * without `_TENANTS` is for the local tenant with auth off, and for no tenant with keys.
   */
  mcpSecretScopes?: Readonly<Record<string, string | undefined>>;
  /**
   * Webhook endpoints allowed though not public (WEBHOOK_ALLOWED_HOSTS: host names, `*.domain`,
   * addresses, CIDRs); default none. An endpoint whose URL holds any other address that is not
   * public is refused with 400; the workers check every address again when they send.
   */
  webhookAllowedHosts?: readonly string[];
  /**
   * The hosts a tab's MCP servers may be on (MCP_TAB_HOSTS; default `*`). A server whose URL
   * holds an address that is not public, and that the list does not name, is refused with 400.
   */
  mcpTabHosts?: readonly string[];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's Prometheus instruments and registry. */
    gatewayMetrics: GatewayMetrics;
    /** Number of open SSE and WebSocket streams. */
    openStreamCount(): number;
  }
}

/** Builds the gateway (not yet listening). Closing it ends streams with a final event. */
export async function createGateway(options: GatewayOptions) {
  const limits: GatewayLimits = { ...defaultGatewayLimits, ...options.limits };
  const app = Fastify({
    // Typed as Fastify's base logger, so the instance's type is the same with or without one.
    ...(options.logger
      ? {
          // Fastify's request serializer logs the URL as sent: this one hides credentials in it.
          loggerInstance: options.logger.child(
            { component: 'http' },
            { serializers: { req: requestLogFields } },
          ) as FastifyBaseLogger,
        }
      : { logger: false }),
    // The caller's x-request-id when valid, else a new one; on every log line of the request.
    genReqId: requestIdOf,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: limits.bodyBytes,
    // Streams outlive requests; they are ended in preClose, idle keep-alives are dropped.
    forceCloseConnections: 'idle',
    // Fastify's own 503 while closing is written raw, without the error shape or Retry-After:
    // the guard registered below answers those requests instead.
    return503OnClosing: false,
    // A path whose percent escapes do not decode never reaches a route or the error handler.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      sendError(reply, toHttpError(error));
    },
  }).withTypeProvider<ZodTypeProvider>();
  // First of all hooks, so every answer names its request: errors, 404s, preflights, streams.
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
  // Before every route, so each handler runs inside its request's span.
  await app.register(tracingPlugin);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installJsonBodyParser(app);

  const metrics = createGatewayMetrics(options.metricsRegistry);
  const context: GatewayContext = {
    store: options.store,
    bus: options.bus,
    clock: options.clock ?? Date.now,
    limits,
    tickets: createStreamTickets({ secret: options.ticketSecret, ttlMs: limits.ticketTtlMs }),
    metrics,
    hub: new TabEventHub(options.bus, app.log, (seconds) => metrics.sealDelay.observe(seconds)),
    contextBuilder: options.contextBuilder ?? createWorkerContextBuilder({ bus: options.bus }),
    streams: new Set(),
    streamSlots: new StreamSlots(limits),
    mcpSecretScopes: options.mcpSecretScopes ?? process.env,
    unlistedSecretsTenant: options.auth.mode === 'off' ? LOCAL_TENANT_NAME : null,
    webhookHosts: parseOutboundAllowlist(options.webhookAllowedHosts ?? []),
    mcpTabHosts: parseOutboundAllowlist(options.mcpTabHosts ?? ['*']),
  };
  app.decorate('gatewayMetrics', metrics);
  app.decorate('openStreamCount', () => context.streams.size);

  const heartbeat = setInterval(() => {
    for (const stream of context.streams) stream.heartbeat();
  }, limits.heartbeatMs);
  heartbeat.unref();
  let reconciling = false;
  const reconcile = setInterval(() => {
    if (reconciling) return;
    reconciling = true;
    context.hub
      .reconcile(options.store)
      .catch((error) => app.log.warn({ err: error }, 'reconcile failed'))
      .finally(() => {
        reconciling = false;
      });
  }, limits.reconcileMs);
  reconcile.unref();
  // Registered before @fastify/websocket so streams get their final event before its sockets close.
  let closing = false;
  // Responses finished during shutdown close their connection: a keep-alive socket would
  // otherwise hold server.close() open until its idle timeout.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });
  app.addHook('preClose', async () => {
    closing = true;
    clearInterval(heartbeat);
    clearInterval(reconcile);
    for (const stream of [...context.streams]) stream.end('shutdown');
  });
  if (options.auth.mode === 'off') {
    // Tabs belong to a tenant even with auth off: make sure the local one exists (idempotent).
    const localTenantId = options.auth.localTenantId ?? LOCAL_TENANT_ID;
    app.addHook('onReady', async () => {
      await options.storeReady;
      await options.store.createTenant({ name: LOCAL_TENANT_NAME, id: localTenantId });
    });
  }
  app.addHook('onClose', async () => {
    await context.hub.close();
  });

  // An upgrade refused with an HTTP answer (401, 404) leaves a socket Node no longer tracks:
  // end it once the answer is written, or it would hold shutdown open for as long as the
  // client pleases.
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.upgrade === undefined) return;
    reply.raw.once('finish', () => request.raw.socket?.end());
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  });

  // First, so every response has them, whichever hook answers it.
  await app.register(securityHeadersPlugin, { docsPrefix: '/docs' });
  // With auth off, before anything else reads the request: only loopback Host names, and no
  // state changes from other sites.
  if (options.auth.mode === 'off') {
    await app.register(localOriginGuardPlugin, { corsOrigins: options.cors?.origins ?? [] });
  }
  // Before authentication: a preflight carries no credentials and is answered on its own.
  if (options.cors && options.cors.origins.length > 0) await app.register(corsPlugin, options.cors);
  // After CORS, so a browser can read the 503; before authentication, which would ask the store.
  await app.register(closingGuardPlugin, { isClosing: () => closing });
  await app.register(errorHandlerPlugin);
  await app.register(oversizedBodyPlugin);
  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'chunklog gateway',
        description:
          'Tabs, messages, paged chunk reads, live streams (SSE and WebSocket) and webhooks of chunklog, an append-only chunk log per conversation. Errors answer { error: { code, message, requestId } }; 503 unavailable and 429 rate_limited come with Retry-After. Creates take an Idempotency-Key.',
        version: gatewayVersion,
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'an API key (API_KEYS)' },
          streamTicket: {
            type: 'apiKey',
            in: 'query',
            name: 'ticket',
            description:
              "a ticket from POST /v1/tabs/{tabId}/stream-tickets, good for that tab's streams only, for 60 s",
          },
        },
      },
      security: [{ apiKey: [] }],
    },
    transform: createJsonSchemaTransform({ schemaRegistry: openApiRegistry }),
    transformObject: (document) =>
      withoutUnusedInputComponents(
        createJsonSchemaTransformObject({ schemaRegistry: openApiRegistry })(document),
      ),
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    staticCSP: docsContentSecurityPolicy,
  });
  await app.register(authPlugin, {
    store: options.store,
    tickets: context.tickets,
    mode: options.auth.mode,
    localTenantId: options.auth.localTenantId ?? LOCAL_TENANT_ID,
    clock: context.clock,
    failedAttemptsPerMinute: limits.failedAuthPerMinute,
  });
  await app.register(fastifyRateLimit, {
    global: true,
    // After authentication, so limits count per key rather than per address.
    hook: 'preHandler',
    max: limits.requestsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => request.principal?.rateKey ?? `ip:${request.ip}`,
    errorResponseBuilder: (_request, rate) => ({
      statusCode: 429,
      code: 'rate_limited',
      message: `rate limit of ${rate.max} requests per minute exceeded, retry in ${rate.after}`,
    }),
  });
  await app.register(fastifyWebsocket, {
    options: { maxPayload: 64 * 1024 },
    errorHandler: (error, socket, request) => {
      request.log.warn({ err: error, status: toHttpError(error).status }, 'websocket failed');
      socket.terminate();
    },
  });

  await app.register(healthRoutes, { context });
  await app.register(tabRoutes, { context });
  await app.register(messageRoutes, { context });
  await app.register(approvalRoutes, { context });
  await app.register(forkRoutes, { context });
  await app.register(chunkRoutes, { context });
  await app.register(searchRoutes, { context });
  await app.register(streamRoutes, { context });
  await app.register(webhookRoutes, { context });
  await app.register(webAppPlugin);
  return app;
}
