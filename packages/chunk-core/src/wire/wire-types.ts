/**
 * The slice of the Anthropic Messages API that chunklog sends and receives, typed here so that
 * chunk-core stays free of the SDK (it runs in browsers and must not pull network code). The
 * shapes mirror `@anthropic-ai/sdk` 1.x (`MessageParam`, `ContentBlockParam`, `Tool`,
 * `RawMessageStreamEvent`); field names stay in the API's snake_case on purpose.
 */
import { z } from 'zod';
import type { CompactionBlock, CompactionConfig } from '../compaction/compaction';

/** A prompt-cache breakpoint marker. */
export type WireCacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

/** A text block (in a message, a system prompt or a tool result). */
export type WireTextBlock = { type: 'text'; text: string; cache_control?: WireCacheControl };

/** A signed thinking block; replayed byte-exact. */
export type WireThinkingBlock = { type: 'thinking'; thinking: string; signature: string };

/** A thinking block the API redacted; replayed as the opaque `data` it sent. */
export type WireRedactedThinkingBlock = { type: 'redacted_thinking'; data: string };

/** A tool call made by the model. */
export type WireToolUseBlock = {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: WireCacheControl;
};

/** The answer to a tool call, sent back in the next user message. */
export type WireToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | WireTextBlock[];
  is_error?: boolean;
  cache_control?: WireCacheControl;
};

/** A compaction block, sent back as returned, first in `messages` (see compaction.ts). */
export type WireCompactionBlock = CompactionBlock;

/** Any content block chunklog puts in a request message. */
export type WireContentBlock =
  | WireCompactionBlock
  | WireTextBlock
  | WireThinkingBlock
  | WireRedactedThinkingBlock
  | WireToolUseBlock
  | WireToolResultBlock;

/** One request message (the SDK's `MessageParam`); chunklog always sends block arrays. */
export type WireMessage = { role: 'user' | 'assistant'; content: WireContentBlock[] };

/** A tool definition offered to the model (the SDK's `Tool`). */
export type WireTool = {
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
  cache_control?: WireCacheControl;
};

/** The thinking setting of a request. */
export type WireThinkingConfig = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };

/** A Messages API request body (the SDK's `MessageCreateParams`, the fields chunklog uses). */
export type WireRequest = {
  model: string;
  max_tokens: number;
  system?: WireTextBlock[];
  tools?: WireTool[];
  thinking?: WireThinkingConfig;
  /** Set on a compaction request only (needs the `compact-2026-09-04` beta). */
  compaction?: CompactionConfig;
  messages: WireMessage[];
};

/* Stream events. Parsed loosely: unknown fields are stripped, and unknown (or malformed) event,
   block and delta types become `{ type: 'unknown', originalType }` so a reducer can skip them
   instead of failing, while `switch` over the known types stays exhaustive. */

const unknownVariant = z
  .looseObject({ type: z.string() })
  .transform((value) => ({ type: 'unknown' as const, originalType: value.type }));

const UsageShape = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});

/** Token counts as a stream reports them (every field optional: `message_delta` omits some). */
export type WireStreamUsage = z.infer<typeof UsageShape>;

/** `content_block_start`'s block: the known kinds, or any other type to be skipped. */
export const WireStreamBlockSchema = z.union([
  z.object({ type: z.literal('text'), text: z.string().catch('') }),
  z.object({
    type: z.literal('thinking'),
    thinking: z.string().catch(''),
    signature: z.string().catch(''),
  }),
  z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
  z.object({
    type: z.literal('tool_use'),
    id: z.string(),
    name: z.string(),
    input: z.unknown().optional(),
  }),
  unknownVariant,
]);
export type WireStreamBlock = z.infer<typeof WireStreamBlockSchema>;

/** `content_block_delta`'s delta: the known kinds, or any other type to be skipped. */
export const WireStreamDeltaSchema = z.union([
  z.object({ type: z.literal('text_delta'), text: z.string() }),
  z.object({ type: z.literal('thinking_delta'), thinking: z.string() }),
  z.object({ type: z.literal('signature_delta'), signature: z.string() }),
  z.object({ type: z.literal('input_json_delta'), partial_json: z.string() }),
  unknownVariant,
]);
export type WireStreamDelta = z.infer<typeof WireStreamDeltaSchema>;

/** One raw stream event (the SDK's `RawMessageStreamEvent`, plus `ping` and `error`). */
export const WireStreamEventSchema = z.union([
  z.object({
    type: z.literal('message_start'),
    message: z.looseObject({ id: z.string().optional(), usage: UsageShape.optional() }),
  }),
  z.object({
    type: z.literal('content_block_start'),
    index: z.number().int().nonnegative(),
    content_block: WireStreamBlockSchema,
  }),
  z.object({
    type: z.literal('content_block_delta'),
    index: z.number().int().nonnegative(),
    delta: WireStreamDeltaSchema,
  }),
  z.object({ type: z.literal('content_block_stop'), index: z.number().int().nonnegative() }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.looseObject({ stop_reason: z.string().nullish() }),
    usage: UsageShape.optional(),
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({
    type: z.literal('error'),
    error: z.looseObject({ type: z.string(), message: z.string().optional() }),
  }),
  unknownVariant,
]);
export type WireStreamEvent = z.infer<typeof WireStreamEventSchema>;
