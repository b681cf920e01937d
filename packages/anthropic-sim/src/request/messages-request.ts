import { z } from 'zod';

/**
 * The shape of a Messages API request body as far as the simulator needs it. Shape errors are
 * answered like the real API's: 400 invalid_request_error naming the offending path. The
 * conversation rules (tool_use pairing, thinking order, breakpoints, ...) are checked separately.
 */
export const CacheControlSchema = z.object({
  type: z.literal('ephemeral'),
  ttl: z.enum(['5m', '1h']).optional(),
});
export type CacheControl = z.infer<typeof CacheControlSchema>;

const cacheControl = CacheControlSchema.nullish();

export const TextBlockParamSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControl,
});

export const ImageBlockParamSchema = z.looseObject({
  type: z.literal('image'),
  source: z.looseObject({ type: z.string() }),
  cache_control: cacheControl,
});

export const DocumentBlockParamSchema = z.looseObject({
  type: z.literal('document'),
  source: z.looseObject({ type: z.string() }),
  cache_control: cacheControl,
});

export const ToolUseBlockParamSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

export const ToolResultBlockParamSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z
    .union([z.string(), z.array(z.union([TextBlockParamSchema, ImageBlockParamSchema]))])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});

export const SearchResultBlockParamSchema = z.looseObject({
  type: z.literal('search_result'),
  source: z.string(),
  title: z.string(),
  content: z.array(z.looseObject({ type: z.literal('text'), text: z.string() })),
  cache_control: cacheControl,
});

export const ThinkingBlockParamSchema = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});

export const RedactedThinkingBlockParamSchema = z.looseObject({
  type: z.literal('redacted_thinking'),
  data: z.string(),
});

export const CompactionBlockParamSchema = z.looseObject({
  type: z.literal('compaction'),
  content: z.string().nullish(),
  encrypted_content: z.string().nullish(),
  signature: z.string().nullish(),
  tool_changes: z.array(z.unknown()).nullish(),
  cache_control: cacheControl,
});
export type CompactionBlockParam = z.infer<typeof CompactionBlockParamSchema>;

export const ContentBlockParamSchema = z.discriminatedUnion('type', [
  TextBlockParamSchema,
  ImageBlockParamSchema,
  DocumentBlockParamSchema,
  SearchResultBlockParamSchema,
  ToolUseBlockParamSchema,
  ToolResultBlockParamSchema,
  ThinkingBlockParamSchema,
  RedactedThinkingBlockParamSchema,
  CompactionBlockParamSchema,
]);
export type ContentBlockParam = z.infer<typeof ContentBlockParamSchema>;

export const MessageParamSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlockParamSchema)]),
});
export type MessageParam = z.infer<typeof MessageParamSchema>;

export const ToolSchema = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  cache_control: cacheControl,
});
export type Tool = z.infer<typeof ToolSchema>;

export const ThinkingConfigSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int() }),
  z.looseObject({ type: z.literal('disabled') }),
  z.looseObject({ type: z.literal('adaptive') }),
  z.looseObject({ type: z.literal('between_tools') }),
]);

export const ToolChoiceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({
    type: z.literal('tool'),
    name: z.string(),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.looseObject({ type: z.literal('none') }),
]);

/** `POST /v1/messages/count_tokens`: the request without generation settings. */
export const CountTokensRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(MessageParamSchema),
  system: z.union([z.string(), z.array(TextBlockParamSchema)]).optional(),
  tools: z.array(ToolSchema).optional(),
  tool_choice: ToolChoiceSchema.optional(),
  thinking: ThinkingConfigSchema.optional(),
});
export type CountTokensRequest = z.infer<typeof CountTokensRequestSchema>;

/** `POST /v1/messages`. */
export const MessagesRequestSchema = CountTokensRequestSchema.extend({
  max_tokens: z.number().int().min(1),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  /** Makes the request a compaction request (beta `compact-2026-09-04`). */
  compaction: z
    .looseObject({ type: z.literal('summarize'), instructions: z.string().nullish() })
    .nullish(),
  /** Asks for `diagnostics.cache_miss_reason` against an earlier response. */
  diagnostics: z.looseObject({ previous_message_id: z.string().nullish() }).nullish(),
});
export type MessagesRequest = z.infer<typeof MessagesRequestSchema>;
