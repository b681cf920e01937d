import { webhookEnv } from '@chunklog/runtime';
import { z } from 'zod';
import type { WebhookBackoff } from './webhook-retry-delay';

/** How the dispatcher polls, sends and retries (WEBHOOK_* in the environment). */
export interface WebhookDispatchOptions {
  /** How often the outbox is polled for due deliveries. */
  pollMs: number;
  /** How long one attempt may take; a claim lasts twice that. */
  attemptTimeoutMs: number;
  backoff: WebhookBackoff;
  /** How long after the event a delivery is retried before it is marked failed. */
  maxAgeMs: number;
  /** How long finished deliveries are kept (for the deliveries API) before they are deleted. */
  retentionMs: number;
  /** Deliveries claimed and sent at once (default 16). */
  batchSize?: number;
  /**
   * Endpoints allowed though not public (WEBHOOK_ALLOWED_HOSTS: host names, `*.domain`,
   * addresses, CIDRs); default none: deliveries go to public addresses only.
   */
  allowedHosts?: readonly string[];
}

/** The WEBHOOK_* variables, as @chunklog/runtime's `webhookEnv` parses them. */
export interface WebhookEnv {
  WEBHOOK_POLL_MS: number;
  WEBHOOK_ATTEMPT_TIMEOUT_MS: number;
  WEBHOOK_RETRY_BASE_MS: number;
  WEBHOOK_RETRY_MAX_MS: number;
  WEBHOOK_MAX_AGE_MS: number;
  WEBHOOK_RETENTION_MS: number;
  WEBHOOK_ALLOWED_HOSTS: readonly string[];
}

/** The dispatch options a process's environment sets. */
export function webhookDispatchOptions(env: WebhookEnv): WebhookDispatchOptions {
  return {
    pollMs: env.WEBHOOK_POLL_MS,
    attemptTimeoutMs: env.WEBHOOK_ATTEMPT_TIMEOUT_MS,
    backoff: { baseMs: env.WEBHOOK_RETRY_BASE_MS, maxMs: env.WEBHOOK_RETRY_MAX_MS },
    maxAgeMs: env.WEBHOOK_MAX_AGE_MS,
    retentionMs: env.WEBHOOK_RETENTION_MS,
    allowedHosts: env.WEBHOOK_ALLOWED_HOSTS,
  };
}

/** What an environment without WEBHOOK_* variables sets. */
export const defaultWebhookDispatchOptions: WebhookDispatchOptions = webhookDispatchOptions(
  z.object(webhookEnv).parse({}),
);
