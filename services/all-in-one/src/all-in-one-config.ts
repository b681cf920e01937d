import { ApiKeysSchema, CorsOriginsSchema } from '@chunklog/gateway';
import { z } from 'zod';

const LogLevelSchema = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** The all-in-one process's environment (DESIGN section 11), parsed once at start-up. */
export const AllInOneConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Where PGlite keeps its files; data survives restarts. */
  DATA_DIR: z.string().min(1).default('.data'),
  /** With a key the worker calls the real API; without one, the built-in simulator. */
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  MODEL: z.string().min(1).default('claude-sonnet-4-6'),
  MAX_STEPS: z.coerce.number().int().min(1).max(200).default(25),
  /** `tenant:key` pairs; when set, auth is on. */
  API_KEYS: ApiKeysSchema.optional(),
  /** Browser origins allowed to call the API (CORS), or `*`; unset: no CORS headers. */
  CORS_ORIGINS: CorsOriginsSchema.optional(),
  LOG_LEVEL: LogLevelSchema.default('info'),
});
export type AllInOneConfig = z.infer<typeof AllInOneConfigSchema>;

/** Parses the environment; throws one readable error listing every problem. */
export function parseAllInOneConfig(environment: NodeJS.ProcessEnv): AllInOneConfig {
  // Values set but empty (`ANTHROPIC_API_KEY= npm start`) count as unset, as in the services.
  const present = Object.fromEntries(
    Object.entries(environment).filter(([, value]) => value !== ''),
  );
  const parsed = AllInOneConfigSchema.safeParse(present);
  if (!parsed.success) {
    throw new Error(`Invalid configuration:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** True for addresses only this machine can reach; auth may be off only there. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
