import { chunklogTracer } from '@chunklog/runtime';
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { RouteHandlerMethod } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's trace context: its server span, a child of the caller's `traceparent`; set
     * by the first onRequest hook, null before.
     */
    traceContext: Context | null;
  }
}

/**
 * A server span per HTTP request (docs/architecture.md, "Tracing"), continuing the caller's W3C
 * `traceparent` when it sends one. Route handlers run inside the span, so what they enqueue or
 * publish on the bus carries it to the worker. With tracing off the span is the API's no-op one.
 */
export const tracingPlugin = fastifyPlugin(
  async (app) => {
    app.decorateRequest('traceContext', null);
    app.addHook('onRequest', async (request, reply) => {
      const parent = propagation.extract(ROOT_CONTEXT, request.headers);
      const route = request.routeOptions.url;
      const span = chunklogTracer().startSpan(
        route === undefined ? request.method : `${request.method} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': request.method,
            'url.path': request.url.split('?', 1)[0] ?? '/',
            ...(route === undefined ? {} : { 'http.route': route }),
            'chunklog.request_id': request.id,
          },
        },
        parent,
      );
      request.traceContext = trace.setSpan(parent, span);
      // Tracing off (or this trace not sampled): nothing to record, nothing more to pay.
      if (!span.isRecording()) return;
      // On the raw response rather than onResponse, which a hijacked reply (an SSE stream)
      // never reaches: it ends when the answer is written, or when the connection goes first.
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        const status = reply.raw.statusCode;
        span.setAttribute('http.response.status_code', status);
        if (!reply.raw.writableFinished) span.setAttribute('error.type', 'aborted');
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
      reply.raw.once('finish', end);
      reply.raw.once('close', end);
    });
    app.addHook('onRoute', (routeOptions) => {
      // A WebSocket route's handler takes the socket first; its stream is not one request.
      if (routeOptions.websocket) return;
      const handler = routeOptions.handler as RouteHandlerMethod;
      routeOptions.handler = function tracedHandler(request, reply) {
        return context.with(
          request.traceContext ?? context.active(),
          handler,
          this,
          request,
          reply,
        );
      };
    });
  },
  { name: 'chunklog-tracing' },
);
