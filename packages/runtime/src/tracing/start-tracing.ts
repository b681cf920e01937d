import { context, propagation, trace } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { drainDeferredSpans } from './start-deferred-span';
import { setTracingActive } from './tracing-active';
import { readTracingRequest } from './tracing-env';

/** The process's tracing, as `startTracing` left it. */
export interface Tracing {
  /** True when spans are recorded and exported; false means the API's no-op tracer. */
  enabled: boolean;
  /** Why tracing is off (for the start-up log line); absent when it is on. */
  offReason?: string;
  /** Exports the spans still buffered and stops; a no-op when tracing is off. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** `service.name` of the spans, unless `OTEL_SERVICE_NAME` names another. */
  serviceName: string;
  /** Where the `OTEL_*` variables are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * Span processors in place of the OTLP exporter (tests and benchmarks: an in-memory
   * exporter). Given, tracing is on whatever the environment says.
   */
  spanProcessors?: SpanProcessor[];
}

/**
 * Starts OpenTelemetry tracing for the process when the environment asks for it: a tracer
 * provider with the W3C trace-context propagator and an async-local-storage context manager,
 * exporting in batches over OTLP/HTTP (protobuf, or JSON). When it does not, nothing is loaded or registered: the
 * API stays on its no-op tracer, so spans cost an object each and nothing is sent. Call once,
 * before the process builds anything that traces.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const env = options.env ?? process.env;
  const request = options.spanProcessors ? null : readTracingRequest(env);
  if (request?.enabled === false) {
    return { enabled: false, offReason: request.reason, shutdown: async () => {} };
  }
  // Loaded only when on: a process without tracing never parses the SDK.
  const [{ NodeTracerProvider, BatchSpanProcessor }, resources, { ATTR_SERVICE_NAME }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  let spanProcessors = options.spanProcessors;
  if (request) {
    // The exporter reads OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression), the
    // batch processor OTEL_BSP_*. Protobuf unless JSON is asked for: it is the specification's
    // default, and encodes a span in half the time and half the bytes.
    const { OTLPTraceExporter } =
      request.protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
    spanProcessors = [new BatchSpanProcessor(new OTLPTraceExporter())];
  }
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the process's default name.
  const resource = resources
    .resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  provider.register();
  setTracingActive(true);
  return {
    enabled: true,
    async shutdown() {
      drainDeferredSpans();
      setTracingActive(false);
      await provider.shutdown();
      // Back to the no-op API, so the process (a test file) can start tracing again.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
