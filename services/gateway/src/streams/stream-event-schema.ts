import {
  ApprovalRequestedEventSchema,
  ApprovalResolvedEventSchema,
  ChunkDeltaEventSchema,
  ChunkOpenEventSchema,
  ChunkSealEventSchema,
  StreamEndEventSchema,
  StreamLiveEventSchema,
  TurnDoneEventSchema,
  TurnRetryEventSchema,
  TurnStartEventSchema,
} from '@chunklog/chunk-core';
import { z } from 'zod';

/**
 * One event of a tab's stream, as both transports carry it: over SSE `event: <event>`,
 * `data: <data as JSON>` and, on a seal, `id: <seq>`; over WebSocket one JSON text frame
 * `{ event, data, id? }`. The live events come from the workers (chunk-core's schemas), the
 * last two from the gateway itself.
 */
export const StreamEventSchema = z
  .discriminatedUnion('event', [
    z.object({ event: z.literal('turn-start'), data: TurnStartEventSchema }),
    z.object({ event: z.literal('chunk-open'), data: ChunkOpenEventSchema }),
    z.object({ event: z.literal('chunk-delta'), data: ChunkDeltaEventSchema }),
    z.object({
      event: z.literal('chunk-seal'),
      data: ChunkSealEventSchema,
      id: z
        .number()
        .int()
        .positive()
        .describe("the sealed chunk's seq: resume after it (Last-Event-ID or ?after=)"),
    }),
    z.object({ event: z.literal('turn-retry'), data: TurnRetryEventSchema }),
    z.object({ event: z.literal('turn-done'), data: TurnDoneEventSchema }),
    z.object({ event: z.literal('approval-requested'), data: ApprovalRequestedEventSchema }),
    z.object({ event: z.literal('approval-resolved'), data: ApprovalResolvedEventSchema }),
    z.object({ event: z.literal('stream-live'), data: StreamLiveEventSchema }),
    z.object({ event: z.literal('stream-end'), data: StreamEndEventSchema }),
  ])
  .describe(
    "An event of a tab's stream. SSE: `event: <event>`, `data: <data as JSON>`, and `id: <seq>` on chunk-seal. WebSocket: one JSON text frame `{ event, data, id? }` per event.",
  );
export type StreamEvent = z.infer<typeof StreamEventSchema>;
