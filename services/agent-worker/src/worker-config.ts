import { z } from 'zod';
import { LogLevelSchema } from './logger';

/** The worker's environment (DESIGN section 11), parsed once at start-up. */
export const WorkerConfigSchema = z.object({
  DATABASE_URL: z.url({ error: 'DATABASE_URL is required: a postgres:// URL' }),
  NATS_URL: z.string({ error: 'NATS_URL is required, e.g. nats://127.0.0.1:4222' }).min(1),
  /** Optional: keeps several deployments (or test runs) apart on one NATS server. */
  NATS_SUBJECT_PREFIX: z.string().optional(),
  ANTHROPIC_API_KEY: z
    .string({
      error:
        'ANTHROPIC_API_KEY is required (any value when ANTHROPIC_BASE_URL points at the simulator)',
    })
    .min(1),
  ANTHROPIC_BASE_URL: z.url().optional(),
  MODEL: z.string().min(1).default('claude-sonnet-4-6'),
  MAX_STEPS: z.coerce.number().int().min(1).max(200).default(25),
  MAX_TOKENS: z.coerce.number().int().min(1).max(128_000).default(4096),
  LEASE_MS: z.coerce.number().int().min(200).max(600_000).default(15_000),
  WORKER_ID: z.string().min(1).optional(),
  LOG_LEVEL: LogLevelSchema.default('info'),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;

/** Parses the environment; throws one readable error listing every problem. */
export function parseWorkerConfig(environment: NodeJS.ProcessEnv): WorkerConfig {
  const parsed = WorkerConfigSchema.safeParse(environment);
  if (!parsed.success) {
    throw new Error(`Invalid worker configuration:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}
