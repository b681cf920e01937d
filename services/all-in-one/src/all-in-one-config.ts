import { homedir } from 'node:os';
import { join } from 'node:path';
// The services' config schemas alone: the early start-up path loads nothing else of them.
import { mcpEnv, modelRetryEnv } from '@chunklog/agent-worker/config';
import {
  ApiKeysSchema,
  CorsOriginsSchema,
  gatewayLimitsEnv,
  searchEnv,
} from '@chunklog/gateway/config';
import {
  listenEnv,
  logEnv,
  modelEnv,
  parseEnv,
  shutdownEnv,
  webhookEnv,
} from '@chunklog/runtime/env';
import { z } from 'zod';

/** The all-in-one process's environment, parsed once at start-up. */
export const AllInOneConfigSchema = z.object({
  ...listenEnv({ port: 8787 }),
  /** Where PGlite keeps its files; data survives restarts. */
  DATA_DIR: z.string().min(1).default('.data'),
  /** Where the migrated template a new DATA_DIR is copied from is made once (a cache); `off`: none. */
  PGLITE_TEMPLATE_DIR: z.string().min(1).optional(),
  /** The user's cache folder (XDG); the template's default home is chunklog/ in it. */
  XDG_CACHE_HOME: z.string().min(1).optional(),
  /** With a key the worker calls the real API; without one, the built-in simulator. */
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  ...modelEnv,
  ...modelRetryEnv,
  /** `tenant:key` pairs; when set, auth is on. */
  API_KEYS: ApiKeysSchema.optional(),
  /** Browser origins allowed to call the API (CORS), or `*`; unset: no CORS headers. */
  CORS_ORIGINS: CorsOriginsSchema.optional(),
  ...gatewayLimitsEnv,
  ...searchEnv,
  /** MCP servers offered to every tab (a JSON list; see the agent worker's README). */
  ...mcpEnv,
  ...logEnv,
  ...shutdownEnv,
  ...webhookEnv,
});
export type AllInOneConfig = z.infer<typeof AllInOneConfigSchema>;

/** Parses the environment; throws one EnvError naming every problem. */
export function parseAllInOneConfig(environment: NodeJS.ProcessEnv): AllInOneConfig {
  return parseEnv(AllInOneConfigSchema, environment);
}

/**
 * PGLITE_TEMPLATE_DIR, or chunklog/ in the user's cache folder (~/.cache unless
 * XDG_CACHE_HOME); null for `off`: every new data folder runs initdb.
 */
export function pgliteTemplatesFolder(config: AllInOneConfig): string | null {
  if (config.PGLITE_TEMPLATE_DIR === 'off') return null;
  return (
    config.PGLITE_TEMPLATE_DIR ??
    join(config.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'chunklog')
  );
}

/** Loopback, as MCP_TAB_HOSTS entries. */
const LOOPBACK_NETWORKS = ['127.0.0.0/8', '::1'];

/**
 * The hosts a tab's MCP servers may be on: MCP_TAB_HOSTS, and with auth off loopback too. Such a
 * process serves one user on this machine, who can reach its loopback anyway (a local MCP server
 * while developing one); the other private networks stay closed unless listed. With API keys, a
 * tenant's tab reaches loopback only if MCP_TAB_HOSTS names it.
 */
export function mcpTabHostsOf(config: AllInOneConfig): string[] {
  return config.API_KEYS
    ? [...config.MCP_TAB_HOSTS]
    : [...config.MCP_TAB_HOSTS, ...LOOPBACK_NETWORKS];
}

/** Throws when the config serves beyond this machine without API keys. */
export function refuseOpenWithoutAuth(config: AllInOneConfig): void {
  if (!config.API_KEYS && !isLoopbackHost(config.HOST)) {
    throw new Error(
      `Refusing to serve ${config.HOST} without auth: set API_KEYS=tenant:key, or bind HOST=127.0.0.1.`,
    );
  }
}

/** True for addresses only this machine can reach; auth may be off only there. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
