import { z } from 'zod';
import { TabStatusSchema } from '../tab/tab';
import { LiveEventKindSchema } from './events';

/**
 * Events the gateway adds to a client's stream (SSE and WebSocket), beside the live events
 * the workers publish. They never travel on NATS and carry no `id`.
 */

/**
 * Sent once per stream, when the catch-up (sealed chunks, then the open block) is done and
 * live events follow. `status` and `activeTurnId` are the tab's as of the moment the stream
 * subscribed: every turn change after that arrives as a later `turn-start` / `turn-done`, so
 * a client that resumes after a turn ended knows it is over, and one that resumes mid-turn
 * knows a `turn-done` is still to come.
 */
export const StreamLiveEventSchema = z.object({
  tabId: z.uuid(),
  /** The last seq delivered before going live: the resume point from here on. */
  after: z.number().int().nonnegative(),
  status: TabStatusSchema,
  activeTurnId: z.uuid().nullable(),
});
export type StreamLiveEvent = z.infer<typeof StreamLiveEventSchema>;

/**
 * Why the gateway ended a stream. `slow_client`: it fell behind the buffer bound; `shutdown`:
 * the gateway is stopping; `error`: the stream failed; `tab_deleted`: the tab is gone, so a
 * reconnect would get 404.
 */
export const StreamEndReasonSchema = z.enum(['slow_client', 'shutdown', 'error', 'tab_deleted']);
export type StreamEndReason = z.infer<typeof StreamEndReasonSchema>;

/** The last event of a stream the gateway ends: reconnect with `after` (or Last-Event-ID). */
export const StreamEndEventSchema = z.object({
  reason: StreamEndReasonSchema,
  /** The last seq this stream delivered. */
  after: z.number().int().nonnegative(),
});
export type StreamEndEvent = z.infer<typeof StreamEndEventSchema>;

/** Every event name a client's stream carries: the live events, then the gateway's own. */
export const STREAM_EVENT_NAMES = [
  ...LiveEventKindSchema.options,
  'stream-live',
  'stream-end',
] as const;
