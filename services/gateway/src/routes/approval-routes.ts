import { randomUUID } from 'node:crypto';
import { ApprovalVerdictSchema, ConflictError, InvalidInputError } from '@chunklog/chunk-core';
import type { ApprovalDecisionRecord } from '@chunklog/store';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkEditedInput } from '../approvals/edited-input';
import { tenantOf } from '../auth/auth-plugin';
import {
  ErrorResponseSchema,
  errorResponses,
  IdempotencyHeadersSchema,
  TabIdParamsSchema,
} from '../http/api-schemas';
import { errorBody } from '../http/error-handler';
import { beginIdempotentRequest, sendReplay } from '../idempotency/begin-idempotent-request';
import { nameBasedUuid } from '../idempotency/name-based-uuid';
import type { GatewayContext } from './gateway-context';
import { wakePausedTurn } from './wake-paused-turn';

const noNul = (value: unknown) => !JSON.stringify(value).includes('\\u0000');

const DecisionInputSchema = z
  .object({
    callId: z.string().min(1).max(200),
    decision: ApprovalVerdictSchema,
    input: z
      .record(z.string(), z.unknown())
      .refine(noNul, 'input must not contain NUL (\\u0000)')
      .optional()
      .describe('approve only: the input the tool runs with instead of the model’s'),
    reason: z
      .string()
      .min(1)
      .max(2_000)
      .refine((text) => !text.includes('\u0000'), 'reason must not contain NUL (\\u0000)')
      .optional()
      .describe('deny only: why, as the model reads it in the call’s error result'),
  })
  .strict();

export const ApprovalBodySchema = z
  .object({ decisions: z.array(DecisionInputSchema).min(1).max(128) })
  .strict();

export const ApprovalDecisionSchema = z.object({
  callId: z.string(),
  decision: ApprovalVerdictSchema,
  input: z.record(z.string(), z.unknown()).optional(),
  reason: z.string().optional(),
  decidedBy: z.string(),
  decidedAt: z.number().int().nonnegative(),
});
export const ApprovalAcceptedSchema = z.object({ decisions: z.array(ApprovalDecisionSchema) });
const ApprovalConflictSchema = ErrorResponseSchema.extend({
  decisions: z
    .array(ApprovalDecisionSchema)
    .optional()
    .describe('the decisions already made on these calls, when that is the conflict'),
});

function publicDecision(record: ApprovalDecisionRecord): z.infer<typeof ApprovalDecisionSchema> {
  return {
    callId: record.callId,
    decision: record.decision,
    ...(record.input === undefined ? {} : { input: record.input }),
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    decidedBy: record.decidedBy,
    decidedAt: record.decidedAt,
  };
}

/** Decisions on tool calls that wait for a person; the turn resumes on a worker through the intake. */
export const approvalRoutes: FastifyPluginAsyncZod<{ context: GatewayContext }> = async (
  app,
  { context },
) => {
  const { store, bus, clock } = context;

  app.post(
    '/v1/tabs/:tabId/approvals',
    {
      schema: {
        tags: ['approvals'],
        operationId: 'decideApprovals',
        summary: 'Approve (optionally with edited input) or deny tool calls that wait for a person',
        description:
          'One decision per waiting call (the tab’s `waiting.calls`). The decisions are recorded at once and the paused turn resumes on a worker once every waiting call is decided: approved calls run (with the edited input, checked against the tool’s input schema), denied ones get an error result carrying the reason, and the model goes on. A call decided already answers 409 with its first decision in `decisions`; a call that is not waiting answers 409; in either case nothing is stored. With an Idempotency-Key, a retry with the same body gets the same 202 again.',
        params: TabIdParamsSchema,
        headers: IdempotencyHeadersSchema,
        body: ApprovalBodySchema,
        response: {
          202: ApprovalAcceptedSchema,
          ...errorResponses(400, 401, 404, 413, 415, 422, 429),
          409: {
            description:
              'conflict: a call was decided already (its first decision is in `decisions`), or is not waiting for a decision',
            content: { 'application/json': { schema: ApprovalConflictSchema } },
          },
        },
      },
    },
    async (request, reply) => {
      const { tabId } = request.params;
      const tenantId = tenantOf(request);
      const { decisions } = request.body;
      const [waiting, cancelGeneration] = await Promise.all([
        store.getWaiting(tabId, { tenantId }),
        store.cancelGeneration(tabId, { tenantId }),
      ]);
      const idempotencyKey = request.headers['idempotency-key'];
      const idempotent = await beginIdempotentRequest(store, request.log, {
        tenantId,
        scope: `POST /v1/tabs/${tabId}/approvals`,
        key: idempotencyKey,
        body: { decisions },
        success: { status: 202, schema: ApprovalAcceptedSchema },
        tabId,
      });
      if (idempotent.storedAnswer) return sendReplay(reply, 202, idempotent.storedAnswer);

      const callIds = decisions.map((decision) => decision.callId);
      if (new Set(callIds).size !== callIds.length) {
        throw new InvalidInputError('decisions: one decision per call');
      }
      const earlier = await store.decisionsFor(tabId, callIds);
      if (earlier.length > 0) return sendConflict(earlier);
      const calls = new Map((waiting?.calls ?? []).map((call) => [call.callId, call]));
      decisions.forEach((decision, index) => {
        const call = calls.get(decision.callId);
        if (waiting === null || call === undefined) {
          throw new ConflictError(`tool call ${decision.callId} is not waiting for a decision`);
        }
        if (decision.decision === 'deny' && decision.input !== undefined) {
          throw new InvalidInputError(`decisions[${index}].input: only an approval takes input`);
        }
        if (decision.decision === 'approve' && decision.reason !== undefined) {
          throw new InvalidInputError(`decisions[${index}].reason: only a denial takes a reason`);
        }
        if (decision.input !== undefined) {
          const problem = checkEditedInput(call.inputSchema, decision.input);
          if (problem !== null) {
            throw new InvalidInputError(
              `decisions[${index}].input: ${problem} (the ${call.name} tool's input schema)`,
            );
          }
        }
      });
      const turnId = waiting?.turnId as string;
      const decidedBy = request.principal?.rateKey.startsWith('ip:')
        ? 'local'
        : (request.principal?.rateKey ?? 'local');
      const { conflicts } = await store.recordDecisions(
        tabId,
        decisions.map((decision) => ({
          ...decision,
          turnId,
          // With a key, a retry names the same decision chunk.
          chunkId: idempotencyKey
            ? nameBasedUuid(tabId, `${idempotencyKey}:${decision.callId}`)
            : randomUUID(),
          decidedBy,
        })),
      );
      if (conflicts.length > 0) return sendConflict(conflicts);
      // Wakes the paused turn on whichever worker claims the tab; the worker resumes it once
      // every waiting call is decided.
      await wakePausedTurn(bus, { tabId, cancelGeneration, acceptedAt: clock() });
      const recorded = await store.decisionsFor(tabId, callIds);
      const accepted = { decisions: recorded.map(publicDecision) };
      await idempotent.complete(accepted);
      return reply.code(202).send(accepted);

      function sendConflict(existing: ApprovalDecisionRecord[]) {
        return reply.code(409).send({
          ...errorBody(
            'conflict',
            `already decided: ${existing.map((decision) => decision.callId).join(', ')}`,
            request.id,
          ),
          decisions: existing.map(publicDecision),
        });
      }
    },
  );
};
