export { bootstrapApiKeys } from './auth/bootstrap-api-keys';
export { ApiKeysSchema, CorsOriginsSchema, GatewayConfigSchema } from './config/gateway-config';
export type { GatewayLimits } from './config/gateway-limits';
export { createGateway, type GatewayOptions, LOCAL_TENANT_ID } from './create-gateway';
export type { GatewayStore } from './routes/gateway-context';
