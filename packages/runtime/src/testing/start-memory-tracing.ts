import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../tracing/start-tracing';

/** Tracing that keeps every ended span in memory, for tests. */
export interface MemoryTracing {
  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** Forgets the spans ended so far. */
  reset(): void;
  /** Stops tracing and returns the process to the no-op API. */
  shutdown(): Promise<void>;
}

/** Starts tracing for this process with every span kept in memory (each exported as it ends). */
export async function startMemoryTracing(serviceName = 'chunklog-test'): Promise<MemoryTracing> {
  const exporter = new InMemorySpanExporter();
  const tracing = await startTracing({
    serviceName,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    shutdown: () => tracing.shutdown(),
  };
}
