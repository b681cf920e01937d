import { parseOutboundAllowlist } from '@chunklog/runtime/outbound-address';
import type { ClaimedWebhookDelivery, WebhookOutbox } from '@chunklog/store';
import type { Logger } from 'pino';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { guardedDispatcher, type ResolveHost } from '../outbound/guarded-agent';
import { sendWebhook } from './send-webhook';
import type { WebhookDispatchOptions } from './webhook-dispatch-options';
import { webhookRetryDelay } from './webhook-retry-delay';

export interface WebhookDispatcher {
  start(): void;
  /**
   * Stops polling and abandons the attempts in flight (each is recorded as failed, to be retried
   * by any dispatcher), so a hanging receiver never holds up a shutdown.
   */
  stop(): Promise<void>;
  /** Polls now: a turn just ended here and its deliveries are due. */
  nudge(): void;
}

/**
 * Sends the webhook outbox's due deliveries (docs/architecture.md, "Webhooks"). Every worker
 * runs one; the outbox's claim lets several share the rows without sending one twice at once,
 * and a claim that outlives its dispatcher lapses back into the outbox.
 */
const pruneEveryMs = 5 * 60_000;
/** The first prune waits this long after start: a start's first queries serve readiness. */
const firstPruneAfterMs = 30_000;
const pruneBatch = 1_000;

export function createWebhookDispatcher(deps: {
  outbox: WebhookOutbox;
  logger: Logger;
  options: WebhookDispatchOptions;
  metrics: WorkerMetrics;
  now?: () => number;
  random?: () => number;
  /** How endpoints' host names are resolved (default: the system's resolver). */
  resolveHost?: ResolveHost;
}): WebhookDispatcher {
  const { outbox, logger, options, metrics } = deps;
  /** Every request goes through it: only allowed addresses are connected to. */
  const guarded = guardedDispatcher({
    allowlist: parseOutboundAllowlist(options.allowedHosts ?? []),
    ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}),
    onRefused: ({ host, address }) =>
      logger.warn({ host, address }, 'webhook endpoint address refused'),
  });
  const now = deps.now ?? Date.now;
  const batchSize = options.batchSize ?? 16;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = true;
  let failing = false;
  let stopping = new AbortController();
  let prunedAt = Number.NEGATIVE_INFINITY;

  async function attempt(delivery: ClaimedWebhookDelivery): Promise<void> {
    const sent = await sendWebhook(delivery, {
      timeoutMs: options.attemptTimeoutMs,
      now,
      signal: stopping.signal,
      dispatcher: await guarded.agent(),
    });
    metrics.webhookAttempts.inc({ result: sent.delivered ? 'delivered' : 'failed' });
    const result = sent.delivered
      ? sent
      : {
          delivered: false as const,
          statusCode: sent.statusCode,
          // The tenant's side of the failure; `detail` goes to the log only.
          error: sent.error,
          retryInMs: webhookRetryDelay(delivery.attempt, options.backoff, deps.random),
          maxAgeMs: options.maxAgeMs,
        };
    const recorded = await outbox.recordWebhookAttempt(delivery.id, {
      attempt: delivery.attempt,
      result,
    });
    const fields = {
      deliveryId: delivery.id,
      messageId: delivery.messageId,
      attempt: delivery.attempt,
      statusCode: sent.statusCode,
    };
    if (!recorded) logger.warn(fields, 'webhook attempt outlived its claim; not recorded');
    else if (sent.delivered) logger.debug(fields, 'webhook delivered');
    else
      logger.info({ ...fields, error: sent.error, detail: sent.detail }, 'webhook attempt failed');
  }

  /** Deletes finished deliveries past their retention, a batch at most every few minutes. */
  async function prune(): Promise<void> {
    if (now() - prunedAt < pruneEveryMs) return;
    prunedAt = now();
    const deleted = await outbox.pruneWebhookDeliveries({
      olderThanMs: options.retentionMs,
      limit: pruneBatch,
    });
    if (deleted > 0) logger.debug({ deleted }, 'webhook deliveries past retention deleted');
    // A full batch says more are due: the next poll goes on.
    if (deleted === pruneBatch) prunedAt = Number.NEGATIVE_INFINITY;
  }

  /** Claims and sends until no due delivery is left. */
  async function drain(): Promise<void> {
    await prune();
    while (!stopped) {
      const claimed = await outbox.claimWebhookDeliveries({
        limit: batchSize,
        leaseMs: 2 * options.attemptTimeoutMs,
      });
      await Promise.all(
        claimed.map((delivery) =>
          attempt(delivery).catch((error) =>
            // The claim lapses and the delivery is tried again: at least once, maybe twice.
            logger.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt not recorded'),
          ),
        ),
      );
      if (claimed.length < batchSize) return;
    }
  }

  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = drain()
      .then(
        () => {
          failing = false;
        },
        (error) => {
          // Said once per outage, not at every poll.
          if (!failing) logger.warn({ err: error }, 'webhook outbox poll failed');
          failing = true;
        },
      )
      .finally(() => {
        running = null;
        if (stopped) return;
        if (again) {
          again = false;
          run();
        } else {
          timer = setTimeout(run, options.pollMs);
        }
      });
  }

  return {
    start() {
      stopped = false;
      prunedAt = now() - pruneEveryMs + firstPruneAfterMs;
      stopping = new AbortController();
      run();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      stopping.abort();
      await running;
      await guarded.close();
    },
    nudge: run,
  };
}
