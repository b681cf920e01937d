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

/** The gateway's environment in services mode (DESIGN section 11), parsed once at start-up. */
export const GatewayConfigSchema = z.object({
  DATABASE_URL: z.url({ error: 'DATABASE_URL is required: a postgres:// URL' }),
  NATS_URL: z.string({ error: 'NATS_URL is required, e.g. nats://127.0.0.1:4222' }).min(1),
  /** Optional: keeps several deployments apart on one NATS server (must match the workers'). */
  NATS_SUBJECT_PREFIX: z.string().optional(),
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** `tenant:key` pairs, comma-separated, created (idempotently) at start-up. */
  API_KEYS: ApiKeysSchema.optional(),
  /** Shared by every gateway behind one load balancer, so any of them accepts any ticket. */
  STREAM_TICKET_SECRET: z.string().min(16).optional(),
  MODEL: z.string().min(1).default('claude-sonnet-4-6'),
  MAX_TOKENS: z.coerce.number().int().min(1).max(128_000).default(4096),
  /** Browser origins allowed to call the API (CORS); unset: no CORS headers. */
  CORS_ORIGINS: CorsOriginsSchema.optional(),
  /** Requests per API key per minute (stream opens included). */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1_200),
  /** How long shutdown waits for in-flight requests before exiting anyway. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

/** Parses the environment; throws one error that lists every problem. */
export function parseGatewayConfig(environment: NodeJS.ProcessEnv): GatewayConfig {
  // Values set but empty (`FOO=`, compose's `${FOO:-}`) count as unset.
  const present = Object.fromEntries(
    Object.entries(environment).filter(([, value]) => value !== ''),
  );
  const parsed = GatewayConfigSchema.safeParse(present);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `  ${issue.path.join('.') || 'environment'}: ${issue.message}`,
  );
  throw new Error(`invalid gateway configuration:\n${problems.join('\n')}`);
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
