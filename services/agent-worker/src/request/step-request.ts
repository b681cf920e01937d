import type Anthropic from '@anthropic-ai/sdk';
import {
  assembleRequest,
  buildRequest,
  type Chunk,
  type MessageFold,
  type RequestOptions,
  type TabConfig,
  tabRequestOptions,
  type WireTool,
} from '@chunklog/chunk-core';

/** What a tab's step requests are built from besides the log. */
export interface StepRequestInput {
  config: TabConfig;
  defaults: {
    model: string;
    maxTokens: number;
    /** The most UTF-8 bytes one chunk may take on the wire (see `maxChunkBytes`). */
    maxChunkBytes?: number;
  };
  tools: readonly Anthropic.Tool[];
}

/**
 * The options of a tab's step requests: the tab's settings over the worker's defaults, and the
 * tools offered. Workers answer `/context` with these (REQUEST_OPTIONS_SUBJECT), so the request
 * the gateway shows is built from the same options as the one the turn loop sends.
 */
export function stepRequestOptions(input: StepRequestInput): RequestOptions {
  return {
    ...tabRequestOptions(input.config, input.defaults),
    ...(input.defaults.maxChunkBytes === undefined
      ? {}
      : { maxChunkBytes: input.defaults.maxChunkBytes }),
    // chunk-core types the wire without the SDK; the shapes are the SDK's, field for field.
    tools: input.tools as readonly WireTool[],
  };
}

/**
 * The request for a tab's next step: its options handed to chunk-core's cache-stable builder
 * (per-step fold, breakpoints on the tools, the system prompt and the last two user messages),
 * from the whole log or from a fold of it kept as the log grew (the turn loop's way: the same
 * bytes, at the cost of the new chunks only).
 */
export function buildStepRequest(
  input: StepRequestInput & ({ log: readonly Chunk[] } | { fold: MessageFold }),
): Anthropic.MessageCreateParamsNonStreaming {
  const options = stepRequestOptions(input);
  const request =
    'fold' in input
      ? assembleRequest(input.fold.messages(), options)
      : buildRequest({ chunks: input.log, ...options });
  return request as Anthropic.MessageCreateParamsNonStreaming;
}
