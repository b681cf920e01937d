import { DomainError, InvalidInputError } from '@chunklog/chunk-core';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../auth/auth-plugin';
import {
  errorResponses,
  StreamQuerySchema,
  StreamTicketResponseSchema,
  TabIdParamsSchema,
} from '../http/api-schemas';
import { answer, sendError } from '../http/error-handler';
import type { StreamTransport } from '../metrics/gateway-metrics';
import { createSseSink } from '../streams/sse-sink';
import { StreamEventSchema } from '../streams/stream-event-schema';
import type { StreamSink } from '../streams/stream-sink';
import { STREAM_SLOT_RETRY_AFTER_SECONDS } from '../streams/stream-slots';
import { TabStreamRelay } from '../streams/tab-stream-relay';
import { createWebSocketSink } from '../streams/web-socket-sink';
import type { GatewayContext } from './gateway-context';

/** Streams take the API key or a stream ticket for their tab (browsers' EventSource). */
const streamSecurity: { [scheme: string]: string[] }[] = [{ apiKey: [] }, { streamTicket: [] }];

const streamDescription =
  'The stream sends every sealed chunk after the resume point as chunk-seal, then the open block (chunk-open and one chunk-delta with its text so far), then stream-live, then live events; the gateway ends it with stream-end, carrying the seq to resume after. Events: #/components/schemas/StreamEvent.';

const StreamHeadersSchema = z.object({
  'last-event-id': z
    .string()
    .regex(/^\d{1,15}$/, 'Last-Event-ID must be a seq')
    .optional(),
});

/** Live streams of a tab (SSE and WebSocket) and the tickets that open them from browsers. */
export const streamRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store, tickets, clock, metrics, limits } = context;

  /** A slot under the stream caps, or a 429 with Retry-After before anything is opened. */
  function takeStreamSlot(request: FastifyRequest, reply: FastifyReply): () => void {
    if (!request.principal) throw new DomainError('unauthorized', 'not authenticated');
    try {
      return context.streamSlots.take(request.principal);
    } catch (error) {
      reply.header('retry-after', String(STREAM_SLOT_RETRY_AFTER_SECONDS));
      throw error;
    }
  }

  function startRelay(input: {
    tabId: string;
    after: number;
    transport: StreamTransport;
    logger: FastifyBaseLogger;
    createSink: (onEvent: (event: string) => void) => StreamSink;
  }): TabStreamRelay {
    const relayed = metrics.eventsRelayed;
    const sink = input.createSink((event) => relayed.inc({ transport: input.transport, event }));
    const relay = new TabStreamRelay({
      tabId: input.tabId,
      after: input.after,
      store,
      bus: context.bus,
      hub: context.hub,
      sink,
      logger: input.logger,
      maxQueuedEvents: limits.streamQueueEvents,
      maxBufferedBytes: limits.streamBufferBytes,
      snapshotTimeoutMs: limits.snapshotTimeoutMs,
      onEnd: (reason) => {
        context.streams.delete(relay);
        metrics.streamConnections.dec({ transport: input.transport });
        if (reason !== 'closed') metrics.streamsCutOff.inc({ transport: input.transport, reason });
        if (reason === 'slow_client')
          input.logger.info({ tabId: input.tabId }, 'slow client cut off');
      },
    });
    context.streams.add(relay);
    metrics.streamConnections.inc({ transport: input.transport });
    void relay.start();
    return relay;
  }

  app.post(
    '/v1/tabs/:tabId/stream-tickets',
    {
      schema: {
        tags: ['streams'],
        operationId: 'createStreamTicket',
        summary: 'A short-lived ticket, good for this tab only, to pass as ?ticket= on streams',
        params: TabIdParamsSchema,
        response: {
          201: StreamTicketResponseSchema,
          ...errorResponses(400, 401, 404, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const { tabId } = request.params;
      await store.getTab(tabId, { tenantId });
      return reply.code(201).send(tickets.issue({ tabId, tenantId, now: clock() }));
    },
  );

  app.get(
    '/v1/tabs/:tabId/events',
    {
      config: { auth: 'stream' },
      schema: {
        tags: ['streams'],
        operationId: 'streamTabEvents',
        summary:
          'Server-Sent Events: sealed chunks after Last-Event-ID / ?after=, the open block, then live events',
        description: streamDescription,
        security: streamSecurity,
        params: TabIdParamsSchema,
        querystring: StreamQuerySchema,
        headers: StreamHeadersSchema,
        response: {
          200: {
            description:
              'text/event-stream: one SSE event per StreamEvent (`event:` its event, `data:` its data as JSON, `id:` the seq on chunk-seal), comment lines as heartbeats',
            content: { 'text/event-stream': { schema: StreamEventSchema } },
          },
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const { tabId } = request.params;
      const tab = await store.getTab(tabId, { tenantId: tenantOf(request) });
      // The header is what EventSource sends on its own reconnects: it is newer than ?after=.
      const header = request.headers['last-event-id'];
      const after = header === undefined ? (request.query.after ?? 0) : Number(header);
      if (!Number.isSafeInteger(after)) throw new InvalidInputError('bad resume point');
      checkResumePoint(after, tab.lastSeq);
      const release = takeStreamSlot(request, reply);
      reply.hijack();
      const response = reply.raw;
      // The stream writes its own head: keep what hooks set on the reply (CORS, rate limits).
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) response.setHeader(name, value);
      }
      // A client that left during the lookup above fired 'close' already, and 'close' never
      // fires twice: a relay started now would hold its subscription until shutdown.
      if (response.destroyed) {
        release();
        return;
      }
      response.on('close', release);
      const relay = startRelay({
        tabId,
        after,
        transport: 'sse',
        logger: request.log,
        createSink: (onEvent) => createSseSink(response, onEvent, request.id),
      });
      // 'close' on the response: the client went away or the stream ended.
      response.on('close', () => relay.close());
    },
  );

  app.route({
    method: 'GET',
    url: '/v1/tabs/:tabId/ws',
    config: { auth: 'stream' },
    schema: {
      tags: ['streams'],
      operationId: 'streamTabWebSocket',
      summary:
        'WebSocket: the same events as JSON frames { event, data, id? }; resume with ?after=',
      description: streamDescription,
      security: streamSecurity,
      params: TabIdParamsSchema,
      querystring: StreamQuerySchema,
      response: {
        101: {
          description:
            'Switching Protocols: the server sends one JSON text frame per StreamEvent, `{ event, data, id? }`',
          content: { 'application/json': { schema: StreamEventSchema } },
        },
        ...errorResponses(400, 401, 404, 426, 429),
      },
    },
    // Tenancy is checked before the upgrade, so another tenant's tab is a plain 404.
    preHandler: async (request, reply) => {
      const tab = await store.getTab(request.params.tabId, { tenantId: tenantOf(request) });
      checkResumePoint(request.query.after ?? 0, tab.lastSeq);
      if (request.headers.upgrade === undefined) return;
      // Held until the connection closes: the upgrade, the stream and its end all ride on it.
      const release = takeStreamSlot(request, reply);
      const socket = request.raw.socket;
      if (socket.destroyed) release();
      else socket.once('close', release);
    },
    // A plain GET (no Upgrade header): the route is documented in OpenAPI, and says how to use it.
    handler: async (_request, reply) =>
      sendError(
        reply.header('upgrade', 'websocket'),
        answer(426, 'upgrade_required', 'open this route as a WebSocket'),
      ),
    wsHandler: (socket, request) => {
      const relay = startRelay({
        tabId: request.params.tabId,
        after: request.query.after ?? 0,
        transport: 'ws',
        logger: request.log,
        createSink: (onEvent) => createWebSocketSink(socket, onEvent),
      });
      socket.on('close', () => relay.close());
      socket.on('error', () => relay.close());
    },
  });
};

/**
 * Seals are published only after their commit, so a seq a client saw is never past the tail it
 * reads now: one that is (another tab's seq, a reset data folder) would have every seal up to it
 * dropped in silence. Refused before the stream opens.
 */
function checkResumePoint(after: number, lastSeq: number): void {
  if (after > lastSeq) {
    throw new InvalidInputError(
      `resume point ${after} is past the tab's last seq ${lastSeq}: resume from a seq this tab sent`,
    );
  }
}
