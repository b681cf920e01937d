import { type ApprovalPolicy, defaultRequestDefaults } from '@chunklog/chunk-core';
import { z } from 'zod';
import { LogLevelSchema } from './log-level';
import { allowlistEntryProblem, splitAllowlist } from './outbound/outbound-address';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './run-until-signal';

/** A TCP port; 0 asks the system for a free one. */
function portSchema(defaultPort: number) {
  return z.coerce
    .number({ error: 'must be a port number' })
    .int()
    .min(0)
    .max(65_535)
    .default(defaultPort);
}

/** PORT and HOST of a process that listens; loopback unless told otherwise. */
export function listenEnv(defaults: { port: number; host?: string }) {
  return {
    PORT: portSchema(defaults.port),
    HOST: z
      .string()
      .min(1)
      .default(defaults.host ?? '127.0.0.1'),
  };
}

/** LOG_LEVEL, pino's level names; `info` by default. */
export const logEnv = {
  LOG_LEVEL: LogLevelSchema.default('info'),
};

/** DATABASE_URL: the Postgres server. */
export const databaseEnv = {
  DATABASE_URL: z
    .string({ error: 'required: a postgres:// URL' })
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// URL'),
};

/**
 * NATS_URL (one server, or a comma-separated list of a cluster's servers), the subject prefix
 * that keeps deployments on one NATS server apart, and how many servers hold each work-queue
 * stream.
 */
export const natsEnv = {
  NATS_URL: z
    .string({ error: 'required, e.g. nats://127.0.0.1:4222' })
    .min(1)
    .transform((value) => value.split(',').map((server) => server.trim())),
  /** Must be the same for the gateways and workers of one deployment. */
  NATS_SUBJECT_PREFIX: z.string().min(1).optional(),
  /** Replicas of the intake stream when it is created: 3 on a three-node JetStream cluster. */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
};

/** The model defaults: a tab's config overrides them. */
export const modelEnv = {
  MODEL: z.string().min(1).default(defaultRequestDefaults.model),
  MAX_STEPS: z.coerce.number().int().min(1).max(200).default(25),
  MAX_TOKENS: z.coerce.number().int().min(1).max(128_000).default(defaultRequestDefaults.maxTokens),
  /**
   * The deployment's approval policy, for tabs whose config sets none: `all`, `none` (the
   * default), or comma-separated tool names and patterns (`send_email,github_*`).
   */
  APPROVAL_TOOLS: z
    .string()
    .default('none')
    .transform((value) => {
      const trimmed = value.trim();
      if (trimmed === 'all' || trimmed === 'none' || trimmed === '') return trimmed || 'none';
      return trimmed.split(',').map((name) => name.trim());
    })
    .pipe(
      z.union([
        z.literal('all'),
        z.literal('none'),
        z.array(z.string().regex(/^[a-zA-Z0-9_*-]{1,64}$/, 'a tool name or pattern')).max(128),
      ]),
    ),
  /** Undecided calls are denied with reason `expired` after this many seconds (unset: never). */
  APPROVAL_EXPIRES_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(365 * 86_400)
    .optional(),
};

/** SHUTDOWN_TIMEOUT_MS: how long a shutdown may take before the process exits anyway. */
export const shutdownEnv = {
  SHUTDOWN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(300_000)
    .default(DEFAULT_SHUTDOWN_TIMEOUT_MS),
};

const durationMs = (min: number, max: number, defaultMs: number) =>
  z.coerce.number().int().min(min).max(max).default(defaultMs);

/**
 * A comma-separated allowlist of hosts and networks (outbound/outbound-address.ts): host names,
 * `*.domain`, addresses and CIDRs, each checked at start-up; the value is the list of entries.
 */
function allowlistSchema(options: { any: boolean }) {
  return z.string().transform((text, context) => {
    const entries = splitAllowlist(text);
    for (const entry of entries) {
      const problem =
        entry === '*' && !options.any
          ? '"*" is not allowed here: list the networks to open (0.0.0.0/0,::/0 opens every address)'
          : allowlistEntryProblem(entry);
      if (problem !== null) context.addIssue({ code: 'custom', input: text, message: problem });
    }
    return entries;
  });
}

/**
 * Where a tenant may have the worker send requests beyond the public internet. Read by the
 * worker, which checks every address it connects to, and by the gateway, which refuses at once
 * what is plainly refused (an address in a URL).
 */
export const outboundEnv = {
  /**
   * Webhook endpoints allowed though not public: host names, `*.domain`, addresses, CIDRs
   * (`10.0.0.0/8`). Default none: only public addresses.
   */
  WEBHOOK_ALLOWED_HOSTS: allowlistSchema({ any: false }).default([]),
  /**
   * Hosts a tab's MCP servers may be on (`*`: any, `*.example.com`, a host, an address, a CIDR);
   * a host listed by name or network may be private, `*` opens public addresses only.
   */
  MCP_TAB_HOSTS: allowlistSchema({ any: true }).default(['*']),
};

/** How the webhook dispatcher retries (docs/architecture.md, "Webhooks"). */
export const webhookEnv = {
  WEBHOOK_ALLOWED_HOSTS: outboundEnv.WEBHOOK_ALLOWED_HOSTS,
  /** How long one delivery attempt may take before it counts as failed. */
  WEBHOOK_ATTEMPT_TIMEOUT_MS: durationMs(100, 300_000, 10_000),
  /** The first retry's delay; each next one doubles, up to WEBHOOK_RETRY_MAX_MS, with jitter. */
  WEBHOOK_RETRY_BASE_MS: durationMs(10, 3_600_000, 5_000),
  WEBHOOK_RETRY_MAX_MS: durationMs(10, 86_400_000, 3_600_000),
  /** How long after the turn's end a delivery is retried before it is marked failed. */
  WEBHOOK_MAX_AGE_MS: durationMs(1_000, 30 * 86_400_000, 86_400_000),
  /** How often the outbox is polled for due deliveries. */
  WEBHOOK_POLL_MS: durationMs(10, 60_000, 1_000),
  /** How long delivered and failed deliveries stay listed before they are deleted. */
  WEBHOOK_RETENTION_MS: durationMs(60_000, 366 * 86_400_000, 7 * 86_400_000),
};

/** The deployment's approval policy from APPROVAL_TOOLS and APPROVAL_EXPIRES_AFTER_SECONDS. */
export function approvalPolicyFromEnv(env: {
  APPROVAL_TOOLS: 'all' | 'none' | string[];
  APPROVAL_EXPIRES_AFTER_SECONDS?: number | undefined;
}): ApprovalPolicy {
  return {
    tools: env.APPROVAL_TOOLS,
    ...(env.APPROVAL_EXPIRES_AFTER_SECONDS === undefined
      ? {}
      : { expiresAfterSeconds: env.APPROVAL_EXPIRES_AFTER_SECONDS }),
  };
}
