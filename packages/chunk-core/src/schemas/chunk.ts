import { z } from 'zod';
import { CompactionDataSchema } from '../compaction/compaction';
import { CacheMissSchema } from '../wire/cache-miss';

/** Who a chunk speaks for. */
export const ChunkRoleSchema = z.enum(['user', 'assistant', 'tool', 'system']);
export type ChunkRole = z.infer<typeof ChunkRoleSchema>;

/** What kind of content block a chunk holds. */
export const ChunkTypeSchema = z.enum([
  'text',
  'thinking',
  'tool_call',
  'tool_result',
  'error',
  'system',
  'compaction',
  'approval_request',
  'approval_decision',
]);
export type ChunkType = z.infer<typeof ChunkTypeSchema>;

export const TextDataSchema = z.object({
  text: z.string(),
  /** Set when a cancel or crash cut the assistant text short. */
  interrupted: z.boolean().optional(),
  /** On the first chunk a step sealed: why that step's request missed the prompt cache. */
  cacheMiss: CacheMissSchema.optional(),
});
export type TextData = z.infer<typeof TextDataSchema>;

export const ThinkingDataSchema = z.union([
  z.object({
    text: z.string(),
    signature: z.string().optional(),
    cacheMiss: CacheMissSchema.optional(),
  }),
  z.object({ redacted: z.string(), cacheMiss: CacheMissSchema.optional() }),
]);
export type ThinkingData = z.infer<typeof ThinkingDataSchema>;

export const ToolCallDataSchema = z.object({
  callId: z.string().min(1),
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  cacheMiss: CacheMissSchema.optional(),
});
export type ToolCallData = z.infer<typeof ToolCallDataSchema>;

export const ToolResultDataSchema = z.object({
  callId: z.string().min(1),
  name: z.string(),
  result: z.unknown(),
  isError: z.boolean(),
  shellOutput: z.string().optional(),
});
export type ToolResultData = z.infer<typeof ToolResultDataSchema>;

export const ErrorDataSchema = z.object({
  message: z.string(),
  statusCode: z.number().int().optional(),
});
export type ErrorData = z.infer<typeof ErrorDataSchema>;

export const SystemDataSchema = z.object({ kind: z.string().min(1), text: z.string() });
export type SystemData = z.infer<typeof SystemDataSchema>;

/**
 * A tool call that waits for a person's decision (the tab's approval policy names its tool): the
 * turn paused after its step, and resumes once every waiting call of the step is decided.
 */
export const ApprovalRequestDataSchema = z.object({
  callId: z.string().min(1),
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  /** Epoch ms after which the call is denied with reason `expired`; null: it never expires. */
  expiresAt: z.number().int().nonnegative().nullable(),
});
export type ApprovalRequestData = z.infer<typeof ApprovalRequestDataSchema>;

export const ApprovalVerdictSchema = z.enum(['approve', 'deny']);
export type ApprovalVerdict = z.infer<typeof ApprovalVerdictSchema>;

/** A decision on a waiting call: who made it, when, and what the tool runs with. */
export const ApprovalDecisionDataSchema = z.object({
  callId: z.string().min(1),
  name: z.string().min(1),
  decision: ApprovalVerdictSchema,
  /** Approved with edited input: what the tool ran with instead of the model's input. */
  input: z.record(z.string(), z.unknown()).optional(),
  /** Why it was denied (a person's words, or `expired`, `cancelled`, `interrupted`). */
  reason: z.string().optional(),
  /** The API key (or end user) that decided; `system` for an expiry, a cancel or a new message. */
  decidedBy: z.string().min(1),
  decidedAt: z.number().int().nonnegative(),
});
export type ApprovalDecisionData = z.infer<typeof ApprovalDecisionDataSchema>;

const chunkBase = {
  id: z.uuid(),
  tabId: z.uuid(),
  seq: z.number().int().positive(),
  turnId: z.uuid(),
  step: z.number().int().nonnegative(),
  createdAt: z.number().int().nonnegative(),
};

/** Each chunk type with the roles and the data it may carry. */
const bodyShapes = [
  { type: z.literal('text'), role: z.enum(['user', 'assistant']), data: TextDataSchema },
  { type: z.literal('thinking'), role: z.literal('assistant'), data: ThinkingDataSchema },
  { type: z.literal('tool_call'), role: z.literal('assistant'), data: ToolCallDataSchema },
  { type: z.literal('tool_result'), role: z.literal('tool'), data: ToolResultDataSchema },
  { type: z.literal('error'), role: z.enum(['assistant', 'system']), data: ErrorDataSchema },
  { type: z.literal('system'), role: z.literal('system'), data: SystemDataSchema },
  { type: z.literal('compaction'), role: z.literal('assistant'), data: CompactionDataSchema },
  {
    type: z.literal('approval_request'),
    role: z.literal('system'),
    data: ApprovalRequestDataSchema,
  },
  {
    type: z.literal('approval_decision'),
    role: z.literal('system'),
    data: ApprovalDecisionDataSchema,
  },
] as const;

type BodyShape = (typeof bodyShapes)[number];

/**
 * One object schema per chunk type, `fields` first, then type, role and data: a discriminated
 * union of whole objects parses a chunk in one pass (an intersection of the fields with a union
 * of bodies would parse it twice and merge the results, about ten times slower).
 */
function chunkUnion<Fields extends z.ZodRawShape>(fields: Fields) {
  const variant = <Body extends BodyShape>(body: Body) => z.object({ ...fields, ...body });
  return z.discriminatedUnion('type', [
    variant(bodyShapes[0]),
    variant(bodyShapes[1]),
    variant(bodyShapes[2]),
    variant(bodyShapes[3]),
    variant(bodyShapes[4]),
    variant(bodyShapes[5]),
    variant(bodyShapes[6]),
    variant(bodyShapes[7]),
    variant(bodyShapes[8]),
  ]);
}

/** The body of a chunk: type, role and data, checked against each other. */
export const ChunkBodySchema = chunkUnion({});
export type ChunkBody = z.infer<typeof ChunkBodySchema>;

/** A sealed, persisted chunk as the API returns it (docs/architecture.md, "The log"). */
export const ChunkSchema = chunkUnion(chunkBase);
export type Chunk = z.infer<typeof ChunkSchema>;

/** A chunk before the store gives it a seq and a creation time. */
export const NewChunkSchema = chunkUnion({
  id: chunkBase.id,
  tabId: chunkBase.tabId,
  turnId: chunkBase.turnId,
  step: chunkBase.step,
});
export type NewChunk = z.infer<typeof NewChunkSchema>;

/** A page of chunks in ascending seq (contract: GET /v1/tabs/:tabId/chunks). */
export const ChunkPageSchema = z.object({
  chunks: z.array(ChunkSchema),
  total: z.number().int().nonnegative(),
  hasMore: z.boolean(),
});
export type ChunkPage = z.infer<typeof ChunkPageSchema>;
