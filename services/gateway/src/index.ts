export { ErrorResponseSchema, MAX_PAGE_LIMIT } from './api-schemas';
export type { AuthLevel, Principal } from './auth-plugin';
export { bootstrapApiKeys } from './bootstrap-api-keys';
export type { CorsOptions } from './cors-plugin';
export { createGateway, type GatewayOptions, LOCAL_TENANT_ID } from './create-gateway';
export {
  type ContextDefaults,
  createDefaultContextBuilder,
  defaultContextDefaults,
} from './default-context-builder';
export { toHttpError } from './error-handler';
export { ApiKeysSchema, CorsOriginsSchema, parseApiKeys } from './gateway-config';
export type { BuiltContext, ContextBuilder, ContextSource } from './gateway-context';
export { defaultGatewayLimits, type GatewayLimits } from './gateway-limits';
export { createGatewayMetrics, type GatewayMetrics } from './gateway-metrics';
export { idempotentChunkId } from './idempotent-chunk-id';
export { createStreamTickets, type StreamTicketClaims, type StreamTickets } from './stream-ticket';
export type { StreamEnd, StreamEndReason } from './streams/stream-sink';
export { createWorkerContextBuilder, WORKER_CONTEXT_TIMEOUT_MS } from './worker-context-builder';
