import { Histogram, type Registry, type RegistryContentType } from 'prom-client';

/** What the group commit reports about each batch it runs. */
export interface AppendMetrics {
  /** A batch started: how many appends it carries. */
  batch(items: number): void;
  /** A batch's statement answered (or failed) after this long. */
  batchDuration(seconds: number): void;
  /** An append left the queue for its batch after waiting this long. */
  queueWait(seconds: number): void;
}

const noMetrics: AppendMetrics = { batch() {}, batchDuration() {}, queueWait() {} };

function histogram(
  registry: Registry<RegistryContentType>,
  name: string,
  help: string,
  buckets: number[],
): Histogram {
  // A second store on the same registry shares the first one's series.
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Histogram) return existing;
  return new Histogram({ name, help, buckets, registers: [registry] });
}

/** The group commit's histograms on a prom-client registry; none without one. */
export function createAppendMetrics(
  registry: Registry<RegistryContentType> | undefined,
): AppendMetrics {
  if (registry === undefined) return noMetrics;
  const batchItems = histogram(
    registry,
    'chunklog_store_append_batch_size',
    'Appends committed together in one transaction by the store group commit',
    [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
  );
  const batchDuration = histogram(
    registry,
    'chunklog_store_append_batch_duration_seconds',
    "Time a group commit batch's statement took to answer: the round trip, the statement and its commit",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  );
  const queueWait = histogram(
    registry,
    'chunklog_store_append_queue_wait_seconds',
    'Time an append waited for a batch while an earlier batch was in flight',
    [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  );
  return {
    batch: (items) => batchItems.observe(items),
    batchDuration: (seconds) => batchDuration.observe(seconds),
    queueWait: (seconds) => queueWait.observe(seconds),
  };
}
