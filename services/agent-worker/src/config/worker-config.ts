import { z } from 'zod';

/** pino's levels. */
const LogLevelSchema = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** The worker's environment, parsed once at start-up. */
export const WorkerConfigSchema = z.object({
  DATABASE_URL: z.url({ error: 'DATABASE_URL is required: a postgres:// URL' }),
  NATS_URL: z.string({ error: 'NATS_URL is required, e.g. nats://127.0.0.1:4222' }).min(1),
  /** Optional: keeps several deployments (or test runs) apart on one NATS server. */
  NATS_SUBJECT_PREFIX: z.string().optional(),
  /** With a key the worker calls the Anthropic API (or ANTHROPIC_BASE_URL). */
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  /** Without ANTHROPIC_API_KEY, the simulator at this URL is the model (compose sets it). */
  SIMULATOR_URL: z.url().optional(),
  MODEL: z.string().min(1).default('claude-sonnet-4-6'),
  MAX_STEPS: z.coerce.number().int().min(1).max(200).default(25),
  MAX_TOKENS: z.coerce.number().int().min(1).max(128_000).default(4096),
  LEASE_MS: z.coerce.number().int().min(200).max(600_000).default(15_000),
  WORKER_ID: z.string().min(1).optional(),
  LOG_LEVEL: LogLevelSchema.default('info'),
  /** Serves GET /metrics and /healthz on this port when set (0: any free port, logged). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  /** Loopback by default: Prometheus text is for the operator's scraper, not the internet. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;

/** Environment values set but empty (`FOO=` or compose's `${FOO:-}`) count as unset. */
function withoutEmptyValues(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(environment).filter(([, value]) => value !== ''));
}

const ConfigWithModelSchema = WorkerConfigSchema.refine(
  (config) => config.ANTHROPIC_API_KEY !== undefined || config.SIMULATOR_URL !== undefined,
  {
    path: ['ANTHROPIC_API_KEY'],
    // Checked even when other fields are wrong, so the error lists every problem at once.
    when: () => true,
    error: 'ANTHROPIC_API_KEY is required (or SIMULATOR_URL, to use the simulator as the model)',
  },
);

/** The Anthropic client's key and base URL: the real API with a key, else the simulator. */
export function modelClientOptions(config: WorkerConfig): { apiKey: string; baseURL?: string } {
  if (config.ANTHROPIC_API_KEY) {
    return {
      apiKey: config.ANTHROPIC_API_KEY,
      ...(config.ANTHROPIC_BASE_URL ? { baseURL: config.ANTHROPIC_BASE_URL } : {}),
    };
  }
  // parseWorkerConfig guarantees one of the two.
  return { apiKey: 'simulator', baseURL: config.SIMULATOR_URL! };
}

/** Parses the environment; throws one readable error listing every problem. */
export function parseWorkerConfig(environment: NodeJS.ProcessEnv): WorkerConfig {
  const parsed = ConfigWithModelSchema.safeParse(withoutEmptyValues(environment));
  if (!parsed.success) {
    throw new Error(`Invalid worker configuration:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}
