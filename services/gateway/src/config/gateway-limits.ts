/** Bounds that keep one client from costing the gateway unbounded memory or work. */
export interface GatewayLimits {
  /** Largest accepted request body. */
  bodyBytes: number;
  /** Longest message text, in UTF-16 code units. */
  textLength: number;
  /** Requests per key per minute. */
  requestsPerMinute: number;
  /** Streams (SSE and WebSocket) open at once per API key. */
  streamsPerKey: number;
  /** Streams open at once per tenant, over all its keys and stream tickets. */
  streamsPerTenant: number;
  /** Tabs a tenant may have; creating one more answers 409 until some are deleted. */
  tabsPerTenant: number;
  /** Failed authentications per client address per minute before further failures answer 429. */
  failedAuthPerMinute: number;
  /** Live events queued for one stream before it is cut off as too slow. */
  streamQueueEvents: number;
  /** Bytes buffered in one stream's socket before it is cut off as too slow. */
  streamBufferBytes: number;
  /** How long a stream ticket stays valid. */
  ticketTtlMs: number;
  /** Interval of stream heartbeats (SSE comments, WebSocket pings). */
  heartbeatMs: number;
  /** Interval at which streamed tabs are checked for seals lost on the bus. */
  reconcileMs: number;
  /** How long a stream waits for the worker's open-block snapshot. */
  snapshotTimeoutMs: number;
}

export const defaultGatewayLimits: GatewayLimits = {
  bodyBytes: 1024 * 1024,
  textLength: 100_000,
  requestsPerMinute: 1_200,
  streamsPerKey: 200,
  streamsPerTenant: 1_000,
  tabsPerTenant: 100_000,
  failedAuthPerMinute: 120,
  streamQueueEvents: 2_000,
  streamBufferBytes: 1024 * 1024,
  ticketTtlMs: 60_000,
  heartbeatMs: 15_000,
  snapshotTimeoutMs: 1_000,
  reconcileMs: 5_000,
};
