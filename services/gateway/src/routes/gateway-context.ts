import type { Bus } from '@chunklog/bus';
import type { OutboundAllowlist } from '@chunklog/runtime/outbound-address';
import type {
  ApprovalStore,
  CancelStore,
  ChunkReader,
  IdempotencyStore,
  SearchStore,
  TabStore,
  TenantStore,
  WebhookStore,
} from '@chunklog/store';
import type { StreamTickets } from '../auth/stream-ticket';
import type { GatewayLimits } from '../config/gateway-limits';
import type { ContextBuilder } from '../context/context-builder';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { StreamSlots } from '../streams/stream-slots';
import type { TabEventHub } from '../streams/tab-event-hub';
import type { TabStreamRelay } from '../streams/tab-stream-relay';

/**
 * What the gateway may do with the store: tabs, tenants and keys, idempotency keys, cancels and
 * webhook endpoints, and reads of the log. It never appends to a log, takes a lease or touches
 * the inbox: those are the worker's.
 */
export type GatewayStore = TabStore &
  ChunkReader &
  CancelStore &
  TenantStore &
  IdempotencyStore &
  WebhookStore &
  SearchStore &
  Pick<ApprovalStore, 'getWaiting' | 'recordDecisions' | 'decisionsFor'>;

/** What route plugins share: the collaborators and the gateway's running state. */
export interface GatewayContext {
  store: GatewayStore;
  bus: Bus;
  clock: () => number;
  limits: GatewayLimits;
  tickets: StreamTickets;
  metrics: GatewayMetrics;
  hub: TabEventHub;
  contextBuilder: ContextBuilder;
  /** Every open stream, for heartbeats and for ending them at shutdown. */
  streams: Set<TabStreamRelay>;
  /** Open streams per key and per tenant, against their caps. */
  streamSlots: StreamSlots;
  /** Where MCP secrets' scopes are read (`MCP_SECRET_<NAME>_TENANTS`, `_ORIGINS`). */
  mcpSecretScopes: Readonly<Record<string, string | undefined>>;
  /**
   * The tenant that may use an MCP secret without `_TENANTS`: the local tenant with auth off;
   * null with API keys, where such a secret is refused to every tenant.
   */
  unlistedSecretsTenant: string | null;
  /** What a webhook endpoint may be at besides public addresses (WEBHOOK_ALLOWED_HOSTS). */
  webhookHosts: OutboundAllowlist;
  /** What a tab's MCP servers may be on (MCP_TAB_HOSTS): private addresses only if named. */
  mcpTabHosts: OutboundAllowlist;
}
