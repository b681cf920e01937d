import {
  ChunkDeltaEventSchema,
  ChunkOpenEventSchema,
  ChunkPageSchema,
  ChunkSchema,
  ChunkSealEventSchema,
  StreamEndEventSchema,
  StreamLiveEventSchema,
  TabConfigSchema,
  TabSchema,
  TurnDoneEventSchema,
  TurnRetryEventSchema,
  TurnStartEventSchema,
  UsageSchema,
} from '@chunklog/chunk-core';
import { z } from 'zod';
import { StreamEventSchema } from '../streams/stream-event-schema';
import { ErrorResponseSchema } from './api-schemas';

/**
 * The schemas the OpenAPI document names as components (`#/components/schemas/<id>`): routes
 * that use one refer to it instead of repeating it. The stream events are here although no
 * JSON route returns them, so the stream routes can point at them.
 */
export const openApiRegistry = z.registry<{ id: string }>();

const components: [z.ZodType, string][] = [
  [ErrorResponseSchema, 'Error'],
  [TabSchema, 'Tab'],
  [TabConfigSchema, 'TabConfig'],
  [UsageSchema, 'Usage'],
  [ChunkSchema, 'Chunk'],
  [ChunkPageSchema, 'ChunkPage'],
  [StreamEventSchema, 'StreamEvent'],
  [TurnStartEventSchema, 'TurnStartEvent'],
  [ChunkOpenEventSchema, 'ChunkOpenEvent'],
  [ChunkDeltaEventSchema, 'ChunkDeltaEvent'],
  [ChunkSealEventSchema, 'ChunkSealEvent'],
  [TurnRetryEventSchema, 'TurnRetryEvent'],
  [TurnDoneEventSchema, 'TurnDoneEvent'],
  [StreamLiveEventSchema, 'StreamLiveEvent'],
  [StreamEndEventSchema, 'StreamEndEvent'],
];
for (const [schema, id] of components) openApiRegistry.add(schema, { id });
