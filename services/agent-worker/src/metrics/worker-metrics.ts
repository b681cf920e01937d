import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How a tool call ended, as the `outcome` label of the tool histogram. */
export type ToolCallOutcome = 'ok' | 'error' | 'cancelled' | 'interrupted';

/**
 * How one model call (an attempt at a step) ended, as the `outcome` label: `aborted` by a cancel
 * or a lost lease, `interrupted` by a new message (cut short, not failed).
 */
export type ModelStepOutcome = 'finished' | 'failed' | 'aborted' | 'interrupted';

/**
 * The worker's Prometheus instruments. Every name starts with `chunklog_worker_` so the
 * all-in-one process can put them on the gateway's registry without a collision. Turns and
 * tokens are counted here, once per turn by the worker that ran it: summed over the workers of
 * a deployment they are the deployment's.
 */
export interface WorkerMetrics {
  registry: Registry;
  /** Duration of each `store.append` call (one transaction, one or more chunks). */
  appendSeconds: Histogram;
  /** Chunks written by those appends (an append may carry several). */
  chunksAppended: Counter;
  /** Model request sent to its first stream event (time to first token, roughly). */
  modelFirstEventSeconds: Histogram;
  /** One model call from request to its last event (or failure), by outcome. */
  modelStepSeconds: Histogram<'outcome'>;
  /** Model calls retried, by HTTP status (`none` when the failure had no status). */
  modelRetries: Counter<'status'>;
  /** Tool run time, by tool name (`unknown` for names no tool answers to) and outcome. */
  toolSeconds: Histogram<'tool' | 'outcome'>;
  /** Turns this worker finished, by turn-done reason. */
  turns: Counter<'reason'>;
  /** Model tokens of the turns this worker finished, by kind. */
  tokens: Counter<'kind'>;
  /** Leases this worker took over from an owner whose lease had expired. */
  takeovers: Counter;
  /** Compactions requested, by outcome (`compacted`, `nothing`, `failed`, `cancelled`) and cause. */
  compactions: Counter<'outcome' | 'cause'>;
  /** Step requests the API reported a prompt-cache miss for, by `cache_miss_reason` type. */
  cacheMisses: Counter<'reason'>;
  /** Tabs this worker holds right now (subagent child tabs included). */
  runningTurns: Gauge;
  /** Webhook delivery attempts this worker made, by result (`delivered`, `failed`). */
  webhookAttempts: Counter<'result'>;
}

/** Creates the worker's instruments on `registry` (default: a private one). */
export function createWorkerMetrics(registry = new Registry()): WorkerMetrics {
  return {
    registry,
    appendSeconds: new Histogram({
      name: 'chunklog_worker_append_seconds',
      help: 'Duration of each chunk append (one database transaction)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    chunksAppended: new Counter({
      name: 'chunklog_worker_chunks_appended_total',
      help: 'Chunks appended to tab logs by this worker',
      registers: [registry],
    }),
    modelFirstEventSeconds: new Histogram({
      name: 'chunklog_worker_model_first_event_seconds',
      help: 'Model request sent to its first stream event',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    modelStepSeconds: new Histogram({
      name: 'chunklog_worker_model_step_seconds',
      help: 'One model call from request to the end of its stream, by outcome (finished, failed, aborted, interrupted)',
      labelNames: ['outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    modelRetries: new Counter({
      name: 'chunklog_worker_model_retries_total',
      help: 'Model calls retried after a failure, by HTTP status (none: no status)',
      labelNames: ['status'],
      registers: [registry],
    }),
    toolSeconds: new Histogram({
      name: 'chunklog_worker_tool_seconds',
      help: 'Tool run time, by tool and outcome (ok, error, cancelled, interrupted)',
      labelNames: ['tool', 'outcome'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 120],
      registers: [registry],
    }),
    turns: new Counter({
      name: 'chunklog_worker_turns_total',
      help: 'Turns this worker finished, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'chunklog_worker_tokens_total',
      help: 'Model tokens of turns this worker finished, by kind (input, output, cache_read, cache_write)',
      labelNames: ['kind'],
      registers: [registry],
    }),
    takeovers: new Counter({
      name: 'chunklog_worker_takeovers_total',
      help: 'Tab leases taken over from a worker whose lease expired',
      registers: [registry],
    }),
    compactions: new Counter({
      name: 'chunklog_worker_compactions_total',
      help: 'Compactions requested, by outcome and cause (threshold, too_long, requested, refused)',
      labelNames: ['outcome', 'cause'],
      registers: [registry],
    }),
    cacheMisses: new Counter({
      name: 'chunklog_worker_cache_misses_total',
      help: 'Model steps whose prompt missed the cache, by the reason the API gave',
      labelNames: ['reason'],
      registers: [registry],
    }),
    runningTurns: new Gauge({
      name: 'chunklog_worker_running_turns',
      help: 'Tabs this worker holds right now',
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'chunklog_worker_webhook_attempts_total',
      help: 'Webhook delivery attempts, by result',
      labelNames: ['result'],
      registers: [registry],
    }),
  };
}

/** Seconds since `startedAt` (a `performance.now()` reading). */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}
