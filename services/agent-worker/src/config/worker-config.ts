import { DeploymentMcpServersSchema } from '@chunklog/chunk-core/mcp-servers';
import {
  databaseEnv,
  logEnv,
  modelEnv,
  natsEnv,
  outboundEnv,
  parseEnv,
  shutdownEnv,
  webhookEnv,
} from '@chunklog/runtime/env';
import { z } from 'zod';
import { defaultRetryPolicy, type RetryPolicy } from '../turn/retry-defaults';

/**
 * MCP_SERVERS: the MCP servers offered to every tab, as a JSON list (Streamable HTTP and stdio;
 * see the README's "MCP tool servers"), and MCP_TAB_HOSTS. Shared by every process that runs a
 * worker.
 */
export const mcpEnv = {
  MCP_SERVERS: z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        context.addIssue({ code: 'custom', message: 'must be a JSON list of MCP servers' });
        return z.NEVER;
      }
    })
    .pipe(DeploymentMcpServersSchema)
    .optional(),
  /**
   * Hosts a tab's MCP servers may be on, comma-separated (`*`, `*.example.com`, a host, an
   * address, a CIDR); only those named may be at private addresses.
   */
  MCP_TAB_HOSTS: outboundEnv.MCP_TAB_HOSTS,
};

/**
 * How a failed model call is retried: attempts in all (the first included; 1: never retried),
 * and the backoff's first wait and cap (doubling, with jitter; never shorter than the API's
 * retry-after). Shared by every process that runs a worker.
 */
export const modelRetryEnv = {
  MODEL_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(20)
    .default(defaultRetryPolicy.maxAttempts),
  MODEL_RETRY_BASE_MS: z.coerce
    .number()
    .int()
    .min(1)
    .max(60_000)
    .default(defaultRetryPolicy.baseDelayMs),
  MODEL_RETRY_MAX_MS: z.coerce
    .number()
    .int()
    .min(1)
    .max(600_000)
    .default(defaultRetryPolicy.maxDelayMs),
};

/** The retry policy modelRetryEnv's variables describe. */
export function retryPolicyOf(config: {
  MODEL_MAX_ATTEMPTS: number;
  MODEL_RETRY_BASE_MS: number;
  MODEL_RETRY_MAX_MS: number;
}): RetryPolicy {
  return {
    ...defaultRetryPolicy,
    maxAttempts: config.MODEL_MAX_ATTEMPTS,
    baseDelayMs: config.MODEL_RETRY_BASE_MS,
    maxDelayMs: Math.max(config.MODEL_RETRY_BASE_MS, config.MODEL_RETRY_MAX_MS),
  };
}

/** The worker's environment, parsed once at start-up. */
export const WorkerConfigSchema = z.object({
  ...mcpEnv,
  ...databaseEnv,
  ...natsEnv,
  ...modelEnv,
  ...modelRetryEnv,
  ...logEnv,
  ...shutdownEnv,
  ...webhookEnv,
  /** With a key the worker calls the Anthropic API (or ANTHROPIC_BASE_URL). */
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  /** Without ANTHROPIC_API_KEY, the simulator at this URL is the model (compose sets it). */
  SIMULATOR_URL: z.url().optional(),
  LEASE_MS: z.coerce.number().int().min(200).max(600_000).default(15_000),
  /** The model's context window in tokens, which compaction keeps requests within. */
  CONTEXT_WINDOW_TOKENS: z.coerce.number().int().min(1_000).max(10_000_000).default(200_000),
  /** Compact before a step whose request would pass this share of the window. */
  COMPACTION_THRESHOLD: z.coerce.number().min(0.1).max(0.95).default(0.8),
  WORKER_ID: z.string().min(1).optional(),
  /** Serves GET /metrics, /healthz and /readyz on this port when set (0: any free port, logged). */
  METRICS_PORT: z.coerce
    .number({ error: 'must be a port number' })
    .int()
    .min(0)
    .max(65_535)
    .optional(),
  /** Loopback by default: Prometheus text is for the operator's scraper, not the internet. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;

const ConfigWithModelSchema = WorkerConfigSchema.refine(
  (config) => config.ANTHROPIC_API_KEY !== undefined || config.SIMULATOR_URL !== undefined,
  {
    path: ['ANTHROPIC_API_KEY'],
    // Checked even when other fields are wrong, so the error lists every problem at once.
    when: () => true,
    error: 'required (or SIMULATOR_URL, to use the simulator as the model)',
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

/** Parses the environment; throws one EnvError naming every variable at fault. */
export function parseWorkerConfig(environment: NodeJS.ProcessEnv): WorkerConfig {
  return parseEnv(ConfigWithModelSchema, environment);
}
