import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { answer, sendError } from './error-handler';

/**
 * Answers every request that arrives while the gateway closes (pipelined behind one in flight,
 * or on a connection still busy) with 503 `unavailable`, the error shape and Retry-After, as
 * every other 503, and closes its connection: a load balancer or client retries elsewhere.
 */
export const closingGuardPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { isClosing: () => boolean }) => {
    app.addHook('onRequest', async (request, reply) => {
      if (!options.isClosing()) return;
      request.log.info('refused: the gateway is shutting down');
      reply.header('connection', 'close');
      return sendError(reply, answer(503, 'unavailable', 'the gateway is shutting down, retry'));
    });
  },
  { name: 'chunklog-closing-guard' },
);
