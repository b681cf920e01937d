export type { AuthLevel, Principal } from './auth/auth-plugin';
export { bootstrapApiKeys } from './auth/bootstrap-api-keys';
export {
  createStreamTickets,
  type StreamTicketClaims,
  type StreamTickets,
} from './auth/stream-ticket';
export { ApiKeysSchema, CorsOriginsSchema, parseApiKeys } from './config/gateway-config';
export { defaultGatewayLimits, type GatewayLimits } from './config/gateway-limits';
export type { BuiltContext, ContextBuilder, ContextSource } from './context/context-builder';
export {
  type ContextDefaults,
  createDefaultContextBuilder,
  defaultContextDefaults,
} from './context/default-context-builder';
export {
  createWorkerContextBuilder,
  WORKER_CONTEXT_TIMEOUT_MS,
} from './context/worker-context-builder';
export { createGateway, type GatewayOptions, LOCAL_TENANT_ID } from './create-gateway';
export { ErrorResponseSchema, MAX_PAGE_LIMIT } from './http/api-schemas';
export type { CorsOptions } from './http/cors-plugin';
export { toHttpError } from './http/error-handler';
export { createGatewayMetrics, type GatewayMetrics } from './metrics/gateway-metrics';
export { idempotentChunkId } from './routes/idempotent-chunk-id';
export type { StreamEnd, StreamEndReason } from './streams/stream-sink';
