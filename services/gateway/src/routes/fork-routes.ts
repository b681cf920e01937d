import { randomUUID } from 'node:crypto';
import {
  ConflictError,
  INTAKE_QUEUE,
  InvalidInputError,
  isForkPoint,
  MessageCommandSchema,
  type MessageModeSchema,
  nearestForkPoints,
  type Tab,
} from '@chunklog/chunk-core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../auth/auth-plugin';
import {
  errorResponses,
  IdempotencyHeadersSchema,
  ListTabsQuerySchema,
  TabIdParamsSchema,
  TabListResponseSchema,
  TabResponseSchema,
} from '../http/api-schemas';
import { beginIdempotentRequest, sendReplay } from '../idempotency/begin-idempotent-request';
import { idempotentChunkId } from '../idempotency/idempotent-chunk-id';
import { idempotentTabId } from '../idempotency/idempotent-tab-id';
import type { GatewayContext } from './gateway-context';

const SeqSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const ForkBodySchema = z
  .object({
    atSeq: SeqSchema.describe(
      'the seq the fork branches after: its history is the parent\u2019s up to it',
    ),
    title: z.string().max(500).optional(),
  })
  .strict();

/** A fork and the message it was made for (edit and regenerate). */
export const ForkedMessageSchema = z.object({
  tab: TabResponseSchema.shape.tab,
  chunkId: z.uuid(),
});

/**
 * How far back the fork point's step is looked at: only the last step's calls can still lack
 * their results (a step begins once the one before it is answered), and a step is judged on
 * these chunks. Small, so a fork costs the same whatever the tab's size.
 */
export const FORK_WINDOW = 64;

/**
 * Forks: a tab that refers to its parent's history up to a seq instead of copying it, so it costs
 * the same at any depth and its first request reads the parent's prompt cache; and the two
 * forks a chat makes: edit an earlier message, regenerate an answer.
 */
export const forkRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store, bus, clock } = context;

  /** The parent's chunks up to just after `atSeq`, enough to judge the step it ends. */
  async function windowAt(tabId: string, atSeq: number) {
    return (await store.page(tabId, { before: atSeq + 2, limit: FORK_WINDOW })).chunks;
  }

  /** Refuses a fork point past the tab's end or inside a step, naming the nearest allowed ones. */
  async function checkForkPoint(parent: Tab, atSeq: number): Promise<void> {
    if (atSeq > parent.lastSeq) {
      throw new InvalidInputError(`atSeq ${atSeq} is past the tab's last seq ${parent.lastSeq}`);
    }
    const window = await windowAt(parent.id, atSeq);
    if (isForkPoint(window, atSeq)) return;
    const { below, above } = nearestForkPoints(window, atSeq);
    const nearest = [below, above].filter((seq) => seq !== null).join(' or ');
    throw new InvalidInputError(
      `atSeq ${atSeq} is inside a model step (or leaves a tool call without its result); fork at ${nearest}`,
    );
  }

  async function fork(input: {
    tenantId: string;
    parent: Tab;
    atSeq: number;
    title?: string | undefined;
    idempotencyKey?: string | undefined;
  }): Promise<Tab> {
    const { tabsPerTenant } = context.limits;
    if ((await store.countTabs(input.tenantId, tabsPerTenant)) >= tabsPerTenant) {
      throw new ConflictError(
        `the tenant has ${tabsPerTenant} tabs, its limit: delete tabs to create more`,
      );
    }
    return store.forkTab({
      tenantId: input.tenantId,
      parentTabId: input.parent.id,
      atSeq: input.atSeq,
      ...(input.title === undefined ? {} : { title: input.title }),
      ...(input.idempotencyKey === undefined
        ? {}
        : {
            id: idempotentTabId(input.tenantId, `fork:${input.parent.id}:${input.idempotencyKey}`),
          }),
    });
  }

  /** Sends `text` to a fresh fork, as POST /messages would (its tab is idle: no stamp to read). */
  async function sendTo(
    tab: Tab,
    text: string,
    mode: z.infer<typeof MessageModeSchema>,
    key?: string,
  ) {
    const chunkId = key ? idempotentChunkId(tab.id, key) : randomUUID();
    const command = MessageCommandSchema.parse({
      tabId: tab.id,
      chunkId,
      text,
      mode,
      acceptedAt: clock(),
      cancelGeneration: await store.cancelGeneration(tab.id),
    });
    await bus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId });
    return chunkId;
  }

  /** The user message at `seq` in the caller's tab: its text, and the fork point before it. */
  async function userMessageAt(tabId: string, seq: number) {
    const [chunk] = (await store.page(tabId, { after: seq - 1, limit: 1 })).chunks;
    if (chunk?.seq !== seq || chunk.role !== 'user' || chunk.type !== 'text') {
      throw new InvalidInputError(`seq ${seq} is not a user message of the tab`);
    }
    return { text: chunk.data.text, before: seq - 1 };
  }

  /**
   * Edit and regenerate: a fork before the caller's user message at `seq`, with `text` (given
   * the original) sent there; answers 201 `{ tab, chunkId }`, once per Idempotency-Key.
   */
  async function forkBeforeMessage(
    request: FastifyRequest<{ Params: { tabId: string }; Headers: { 'idempotency-key'?: string } }>,
    reply: FastifyReply,
    input: {
      route: 'edit' | 'regenerate';
      seq: number;
      title: string | undefined;
      text: (original: string) => string;
      body: Record<string, unknown>;
    },
  ) {
    const tenantId = tenantOf(request);
    const { tabId } = request.params;
    const parent = await store.getTab(tabId, { tenantId });
    const idempotencyKey = request.headers['idempotency-key'];
    const idempotent = await beginIdempotentRequest(store, request.log, {
      tenantId,
      scope: `POST /v1/tabs/${tabId}/${input.route}`,
      key: idempotencyKey,
      body: input.body,
      success: { status: 201, schema: ForkedMessageSchema },
      tabId,
    });
    if (idempotent.storedAnswer) return sendReplay(reply, 201, idempotent.storedAnswer);
    const message = await userMessageAt(tabId, input.seq);
    await checkForkPoint(parent, message.before);
    const tab = await fork({
      tenantId,
      parent,
      atSeq: message.before,
      title: input.title,
      idempotencyKey,
    });
    const chunkId = await sendTo(tab, input.text(message.text), 'enqueue', idempotencyKey);
    const answer = { tab, chunkId };
    await idempotent.complete(answer);
    return reply.code(201).send(answer);
  }

  app.post(
    '/v1/tabs/:tabId/forks',
    {
      schema: {
        tags: ['forks'],
        operationId: 'forkTab',
        summary: 'Fork a tab after a seq: a new tab whose history up to there is the parent\u2019s',
        description:
          'The fork refers to the parent\u2019s chunks 1..atSeq instead of copying them (the same cost at any depth); its own chunks continue at atSeq + 1, and its first request reads the parent\u2019s prompt cache. atSeq must end a step: inside one (or after a tool call still without its result) answers 400 naming the nearest allowed seqs. With an Idempotency-Key a retry returns the same fork.',
        params: TabIdParamsSchema,
        headers: IdempotencyHeadersSchema,
        body: ForkBodySchema,
        response: {
          201: TabResponseSchema,
          ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const { tabId } = request.params;
      const { atSeq, title } = request.body;
      const parent = await store.getTab(tabId, { tenantId });
      const idempotencyKey = request.headers['idempotency-key'];
      const idempotent = await beginIdempotentRequest(store, request.log, {
        tenantId,
        scope: `POST /v1/tabs/${tabId}/forks`,
        key: idempotencyKey,
        body: { atSeq, title },
        success: { status: 201, schema: TabResponseSchema },
        tabId,
      });
      if (idempotent.storedAnswer) return sendReplay(reply, 201, idempotent.storedAnswer);
      await checkForkPoint(parent, atSeq);
      const tab = await fork({ tenantId, parent, atSeq, title, idempotencyKey });
      const created = { tab };
      await idempotent.complete(created);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/tabs/:tabId/forks',
    {
      schema: {
        tags: ['forks'],
        operationId: 'listForks',
        summary: 'The tab\u2019s forks, newest first: the versions a client shows where they part',
        params: TabIdParamsSchema,
        querystring: ListTabsQuerySchema,
        response: { 200: TabListResponseSchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) =>
      store.listForks(request.params.tabId, {
        tenantId: tenantOf(request),
        limit: request.query.limit,
        ...(request.query.cursor === undefined ? {} : { cursor: request.query.cursor }),
      }),
  );

  const EditBodySchema = z
    .object({
      seq: SeqSchema.min(1).describe('the seq of the user message to edit'),
      text: z
        .string()
        .min(1)
        .max(context.limits.textLength)
        .refine((text) => !text.includes('\u0000'), 'text must not contain NUL (\\u0000)'),
      title: z.string().max(500).optional(),
    })
    .strict();

  app.post(
    '/v1/tabs/:tabId/edit',
    {
      schema: {
        tags: ['forks'],
        operationId: 'editMessage',
        summary: 'Edit an earlier user message: a fork before it, with the new text sent there',
        description:
          'Answers 201 with the new tab and the id its user chunk will have; the original tab is untouched. With an Idempotency-Key a retry answers the same fork and message.',
        params: TabIdParamsSchema,
        headers: IdempotencyHeadersSchema,
        body: EditBodySchema,
        response: {
          201: ForkedMessageSchema,
          ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429),
        },
      },
    },
    (request, reply) =>
      forkBeforeMessage(request, reply, {
        route: 'edit',
        seq: request.body.seq,
        title: request.body.title,
        text: () => request.body.text,
        body: request.body,
      }),
  );

  const RegenerateBodySchema = z
    .object({
      seq: SeqSchema.min(1).describe('the seq of the user message whose answer is made again'),
      title: z.string().max(500).optional(),
    })
    .strict();

  app.post(
    '/v1/tabs/:tabId/regenerate',
    {
      schema: {
        tags: ['forks'],
        operationId: 'regenerateAnswer',
        summary: 'Answer a user message again: a fork before it, with the same text sent there',
        description:
          'The fork\u2019s request repeats the parent\u2019s bytes up to the message, so it reads the parent\u2019s prompt cache. Answers 201 with the new tab and the id of its copy of the message.',
        params: TabIdParamsSchema,
        headers: IdempotencyHeadersSchema,
        body: RegenerateBodySchema,
        response: {
          201: ForkedMessageSchema,
          ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429),
        },
      },
    },
    (request, reply) =>
      forkBeforeMessage(request, reply, {
        route: 'regenerate',
        seq: request.body.seq,
        title: request.body.title,
        text: (original) => original,
        body: request.body,
      }),
  );
};
