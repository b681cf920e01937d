import {
  databaseEnv,
  listenEnv,
  logEnv,
  modelEnv,
  natsEnv,
  outboundEnv,
  parseEnv,
  shutdownEnv,
} from '@chunklog/runtime/env';
import { z } from 'zod';

/** An API_KEYS value: `tenant:key` pairs separated by commas. */
export const ApiKeysSchema = z
  .string()
  .regex(/^\s*[^:,\s]+:[^,\s]+\s*(,\s*[^:,\s]+:[^,\s]+\s*)*$/, {
    error: 'API_KEYS must be tenant:key pairs separated by commas',
  });

/**
 * A CORS_ORIGINS value: browser origins (`https://chat.example.com`, as browsers send them: scheme,
 * host, port if not the default, no path) separated by commas, or `*` for any origin.
 */
export const CorsOriginsSchema = z.string().transform((value, context) => {
  const origins = value
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of origins) {
    if (origin === '*' || isOrigin(origin)) continue;
    context.addIssue({
      code: 'custom',
      input: value,
      message: `"${origin}" is not an origin like https://chat.example.com (lower case, no path or trailing slash) nor *`,
    });
  }
  return origins;
});

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * The caps that keep one key or tenant from exhausting the gateway, read by every process that
 * runs one (services mode and the all-in-one).
 */
export const gatewayLimitsEnv = {
  /** Requests per API key per minute (stream opens included). */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1_200),
  /** Streams (SSE and WebSocket) open at once per API key. */
  STREAMS_PER_KEY: z.coerce.number().int().min(1).default(200),
  /** Streams open at once per tenant, over all its keys and stream tickets. */
  STREAMS_PER_TENANT: z.coerce.number().int().min(1).default(1_000),
  /** Tabs a tenant may have. */
  TABS_PER_TENANT: z.coerce.number().int().min(1).default(100_000),
};

/** Full-text search's settings, read by every process that runs a gateway. */
export const searchEnv = {
  /**
   * The Postgres text search configuration searches use: `simple` (every language alike, no
   * stemming) or a language's (`english`, `german`, …), which gets its own index at start-up.
   */
  SEARCH_TEXT_CONFIG: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a text search configuration name such as simple or english')
    .default('simple'),
};

/** The gateway limits the environment sets (`gatewayLimitsEnv`). */
export function gatewayLimitsOf(config: {
  RATE_LIMIT_PER_MINUTE: number;
  STREAMS_PER_KEY: number;
  STREAMS_PER_TENANT: number;
  TABS_PER_TENANT: number;
}) {
  return {
    requestsPerMinute: config.RATE_LIMIT_PER_MINUTE,
    streamsPerKey: config.STREAMS_PER_KEY,
    streamsPerTenant: config.STREAMS_PER_TENANT,
    tabsPerTenant: config.TABS_PER_TENANT,
  };
}

/** The gateway's environment in services mode, parsed once at start-up. */
export const GatewayConfigSchema = z.object({
  ...databaseEnv,
  ...natsEnv,
  ...listenEnv({ port: 8080 }),
  /** `tenant:key` pairs, comma-separated, created (idempotently) at start-up. */
  API_KEYS: ApiKeysSchema.optional(),
  /** Shared by every gateway behind one load balancer, so any of them accepts any ticket. */
  STREAM_TICKET_SECRET: z.string().min(16).optional(),
  /** `/context`'s fallback when no worker answers. */
  MODEL: modelEnv.MODEL,
  MAX_TOKENS: modelEnv.MAX_TOKENS,
  /** Browser origins allowed to call the API (CORS); unset: no CORS headers. */
  CORS_ORIGINS: CorsOriginsSchema.optional(),
  ...gatewayLimitsEnv,
  ...searchEnv,
  /**
   * What a webhook endpoint or a tab's MCP server may be at besides public addresses: the
   * workers' lists, for refusing at once what they would refuse.
   */
  ...outboundEnv,
  ...shutdownEnv,
  ...logEnv,
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

/** Parses the environment; throws one error that names every problem. */
export function parseGatewayConfig(environment: NodeJS.ProcessEnv): GatewayConfig {
  return parseEnv(GatewayConfigSchema, environment);
}

/** The `tenant:key` pairs of API_KEYS. */
export function parseApiKeys(value: string | undefined): { tenant: string; key: string }[] {
  if (!value) return [];
  return value
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const separator = pair.indexOf(':');
      return { tenant: pair.slice(0, separator), key: pair.slice(separator + 1) };
    });
}
