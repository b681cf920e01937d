import { z } from 'zod';
import { CacheMissSchema } from './cache-miss';
import { CompactionDataSchema } from './compaction';

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

const chunkBase = {
  id: z.uuid(),
  tabId: z.uuid(),
  seq: z.number().int().positive(),
  turnId: z.uuid(),
  step: z.number().int().nonnegative(),
  createdAt: z.number().int().nonnegative(),
};

/** The body of a chunk: type, role and data, checked against each other. */
export const ChunkBodySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), role: z.enum(['user', 'assistant']), data: TextDataSchema }),
  z.object({ type: z.literal('thinking'), role: z.literal('assistant'), data: ThinkingDataSchema }),
  z.object({
    type: z.literal('tool_call'),
    role: z.literal('assistant'),
    data: ToolCallDataSchema,
  }),
  z.object({ type: z.literal('tool_result'), role: z.literal('tool'), data: ToolResultDataSchema }),
  z.object({
    type: z.literal('error'),
    role: z.enum(['assistant', 'system']),
    data: ErrorDataSchema,
  }),
  z.object({ type: z.literal('system'), role: z.literal('system'), data: SystemDataSchema }),
  z.object({
    type: z.literal('compaction'),
    role: z.literal('assistant'),
    data: CompactionDataSchema,
  }),
]);
export type ChunkBody = z.infer<typeof ChunkBodySchema>;

/** A sealed, persisted chunk as the API returns it (docs/architecture.md, "The log"). */
export const ChunkSchema = z.intersection(z.object(chunkBase), ChunkBodySchema);
export type Chunk = z.infer<typeof ChunkSchema>;

/** A chunk before the store gives it a seq and a creation time. */
export const NewChunkSchema = z.intersection(
  z.object({
    id: chunkBase.id,
    tabId: chunkBase.tabId,
    turnId: chunkBase.turnId,
    step: chunkBase.step,
  }),
  ChunkBodySchema,
);
export type NewChunk = z.infer<typeof NewChunkSchema>;

/** A page of chunks in ascending seq (contract: GET /v1/tabs/:tabId/chunks). */
export const ChunkPageSchema = z.object({
  chunks: z.array(ChunkSchema),
  total: z.number().int().nonnegative(),
  hasMore: z.boolean(),
});
export type ChunkPage = z.infer<typeof ChunkPageSchema>;
