import { randomUUID } from 'node:crypto';
import {
  CancelCommandSchema,
  ConflictError,
  cancelSubject,
  INTAKE_QUEUE,
  type MessageCommand,
  MessageCommandSchema,
} from '@chunklog/chunk-core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../auth/auth-plugin';
import {
  CompactAcceptedSchema,
  CompactBodySchema,
  createMessageBodySchema,
  errorResponses,
  IdempotencyHeadersSchema,
  MessageAcceptedSchema,
  TabIdParamsSchema,
} from '../http/api-schemas';
import {
  beginIdempotentRequest,
  type IdempotentRequest,
  sendReplay,
} from '../idempotency/begin-idempotent-request';
import { idempotentChunkId } from '../idempotency/idempotent-chunk-id';
import type { GatewayContext } from './gateway-context';
import { wakePausedTurn } from './wake-paused-turn';

/** Hands user messages, compaction requests and cancels to the workers; the gateway itself never writes chunks. */
export const messageRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store, bus, clock } = context;

  /** The caller's tab and its cancel generation now, the stamp of what is being accepted. */
  async function tabAndStamp(tabId: string, tenantId: string) {
    const [tab, cancelGeneration] = await Promise.all([
      store.getTab(tabId, { tenantId }),
      store.cancelGeneration(tabId, { tenantId }),
    ]);
    return { tab, cancelGeneration };
  }

  /** Queues what was accepted and records the 202's answer for the key's replays. */
  async function enqueueAccepted(
    idempotent: IdempotentRequest<{ chunkId: string }>,
    accepted: Omit<MessageCommand, 'acceptedAt'>,
  ): Promise<{ chunkId: string }> {
    const command = MessageCommandSchema.parse({ ...accepted, acceptedAt: clock() });
    // The chunk id doubles as the queue's dedupe id: a retried key is stored once.
    await bus.enqueue(INTAKE_QUEUE, command, { msgId: command.chunkId });
    const answer = { chunkId: command.chunkId };
    await idempotent.complete(answer);
    return answer;
  }

  app.post(
    '/v1/tabs/:tabId/messages',
    {
      schema: {
        tags: ['messages'],
        operationId: 'sendMessage',
        summary: 'Send a user message; 202 with the id its user chunk will have',
        description:
          'mode says what the message does to a running turn. While a turn waits for a decision on its tool calls, interrupt denies them (reason interrupted) and the model answers this message in that turn, enqueue waits behind the decision, reject answers 409. interrupt (the default) stops the running step at once: a partial answer is kept, marked interrupted (thinking or a tool call cut mid-block is dropped), tool calls it leaves unfinished are answered with an error result ("interrupted by a new message"), and the model answers this message next, in the same turn. enqueue waits for a turn of its own; reject answers 409 while a turn runs. With an Idempotency-Key, a retry with the same body answers the same 202 (Idempotent-Replayed: true) and the message is stored once.',
        params: TabIdParamsSchema,
        headers: IdempotencyHeadersSchema,
        body: createMessageBodySchema(context.limits.textLength),
        response: {
          202: MessageAcceptedSchema,
          ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const { tabId } = request.params;
      const tenantId = tenantOf(request);
      // The stamp is read before the 202: a cancel answered before this request began has
      // raised it already, so it never touches this message; a later cancel stops its turn.
      const { tab, cancelGeneration } = await tabAndStamp(tabId, tenantId);
      const { text, mode } = request.body;
      const idempotencyKey = request.headers['idempotency-key'];
      const idempotent = await beginIdempotentRequest(store, request.log, {
        tenantId,
        scope: `POST /v1/tabs/${tabId}/messages`,
        key: idempotencyKey,
        body: { text, mode },
        success: { status: 202, schema: MessageAcceptedSchema },
        tabId,
      });
      if (idempotent.storedAnswer) return sendReplay(reply, 202, idempotent.storedAnswer);
      if (mode === 'reject' && tab.status !== 'idle') {
        throw new ConflictError(
          tab.status === 'waiting'
            ? 'a turn in this tab waits for a decision on its tool calls'
            : 'a turn is running in this tab',
        );
      }
      const chunkId = idempotencyKey ? idempotentChunkId(tabId, idempotencyKey) : randomUUID();
      const accepted = await enqueueAccepted(idempotent, {
        tabId,
        chunkId,
        text,
        mode,
        cancelGeneration,
      });
      return reply.code(202).send(accepted);
    },
  );

  app.post(
    '/v1/tabs/:tabId/compact',
    {
      schema: {
        tags: ['messages'],
        operationId: 'compactTab',
        summary:
          'Compact the tab now: a turn of its own that summarizes the log so far into a compaction chunk, with optional instructions; 409 while a turn runs',
        params: TabIdParamsSchema,
        headers: IdempotencyHeadersSchema,
        body: CompactBodySchema,
        response: {
          202: CompactAcceptedSchema,
          ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const { tabId } = request.params;
      const tenantId = tenantOf(request);
      const { tab, cancelGeneration } = await tabAndStamp(tabId, tenantId);
      const instructions = request.body?.instructions ?? '';
      const idempotencyKey = request.headers['idempotency-key'];
      // Before the running check: a replay of a compaction that has started gets its 202 again.
      const idempotent = await beginIdempotentRequest(store, request.log, {
        tenantId,
        scope: `POST /v1/tabs/${tabId}/compact`,
        key: idempotencyKey,
        body: { instructions },
        success: { status: 202, schema: CompactAcceptedSchema },
        tabId,
      });
      if (idempotent.storedAnswer) return sendReplay(reply, 202, idempotent.storedAnswer);
      if (tab.status === 'running') throw new ConflictError('a turn is running in this tab');
      if (tab.status === 'waiting') {
        throw new ConflictError('a turn in this tab waits for a decision on its tool calls');
      }
      // The compaction chunk takes this id: a replayed key is queued once, and once its
      // compaction is stored the worker finds the id in the log and stores nothing more.
      const chunkId = idempotencyKey ? idempotentChunkId(tabId, idempotencyKey) : randomUUID();
      const accepted = await enqueueAccepted(idempotent, {
        tabId,
        chunkId,
        // A compact item's text is its instructions; empty: the tab's own.
        text: instructions,
        mode: 'compact',
        cancelGeneration,
      });
      return reply.code(202).send(accepted);
    },
  );

  app.post(
    '/v1/tabs/:tabId/cancel',
    {
      schema: {
        tags: ['messages'],
        operationId: 'cancelTab',
        summary: "Stop the tab's running turn and the turns of messages accepted before it",
        params: TabIdParamsSchema,
        response: { 202: z.object({}), ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { tabId } = request.params;
      // Recorded first: a worker that holds the tab later, or did not hear the publish below,
      // finds it in Postgres before its next model call (docs/architecture.md, "Messages, intake
      // and cancel").
      const tenantId = tenantOf(request);
      const generation = await store.requestCancel(tabId, { tenantId });
      try {
        // The fast path: the holder aborts the model stream at once.
        await bus.publish(cancelSubject(tabId), CancelCommandSchema.parse({ tabId, generation }));
      } catch (error) {
        // Under `err`, pino's error serializer: any other key logs an Error as `{}`.
        request.log.warn(
          { tabId, err: error },
          'cancel recorded but not published; workers read it before their next model call',
        );
      }
      // A paused turn has no holder to hear the cancel: a wake-up has a worker end it (its
      // waiting calls denied as cancelled).
      if ((await store.getWaiting(tabId, { tenantId })) !== null) {
        await wakePausedTurn(bus, { tabId, cancelGeneration: generation, acceptedAt: clock() });
      }
      return reply.code(202).send({});
    },
  );
};
