import type { Bus } from '@chunklog/bus';
import type { Chunk, Tab } from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import type { GatewayLimits } from './gateway-limits';
import type { GatewayMetrics } from './gateway-metrics';
import type { StreamTickets } from './stream-ticket';
import type { TabEventHub } from './streams/tab-event-hub';
import type { TabStreamRelay } from './streams/tab-stream-relay';

/**
 * Builds the Anthropic request the tab's next step would send, for `GET /context`. The worker
 * owns the tool registry, so a gateway that should show tools is given a builder that knows them.
 */
export type ContextBuilder = (input: { tab: Tab; chunks: Chunk[] }) => unknown | Promise<unknown>;

/** What route plugins share: the collaborators and the gateway's running state. */
export interface GatewayContext {
  store: ChunkStore;
  bus: Bus;
  clock: () => number;
  limits: GatewayLimits;
  tickets: StreamTickets;
  metrics: GatewayMetrics;
  hub: TabEventHub;
  contextBuilder: ContextBuilder;
  /** Every open stream, for heartbeats and for ending them at shutdown. */
  streams: Set<TabStreamRelay>;
}
