import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/**
 * The most of a refused body read and thrown away so its client can finish sending and read the
 * 413; a client still sending past it has its connection closed.
 */
export const OVERSIZED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Fastify answers a body over the limit with 413 at once and closes the connection, while the
 * client is still writing: the client then sees a reset (`fetch failed`, EPIPE) instead of the
 * 413, depending on timing. Here the connection stays open and the rest of the body is read
 * and discarded (up to `OVERSIZED_BODY_DRAIN_BYTES`), so a client always gets its answer.
 */
export const oversizedBodyPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { drainBytes?: number }) => {
    const drainBytes = options.drainBytes ?? OVERSIZED_BODY_DRAIN_BYTES;
    app.addHook('onSend', async (request, reply, payload) => {
      const incoming = request.raw;
      if (reply.statusCode !== 413 || incoming.complete || incoming.destroyed) return payload;
      reply.removeHeader('connection');
      let drained = 0;
      incoming.on('data', (part: Buffer) => {
        drained += part.length;
        if (drained > drainBytes) incoming.socket?.destroy();
      });
      incoming.resume();
      return payload;
    });
  },
  { name: 'chunklog-oversized-body' },
);
