import {
  type Attributes,
  type Context,
  context,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';

let cached: { provider: TracerProvider; tracer: Tracer } | undefined;

/**
 * chunklog's tracer: the API's no-op one until a provider is registered. Looked up again when
 * the global provider changes (tracing stopped and started again, in a test or a benchmark):
 * a tracer obtained once would stay bound to the provider it first delegated to.
 */
export function chunklogTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer('chunklog') };
  return cached.tracer;
}

export interface InSpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent's context; default the active one. */
  parent?: Context;
}

/**
 * Runs `work` in a new active span, ending it when `work` settles: a rejection is recorded on
 * the span (status ERROR, the exception as an event) and rethrown.
 */
export function inSpan<T>(
  name: string,
  options: InSpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = chunklogTracer().startSpan(
    name,
    {
      ...(options.kind === undefined ? {} : { kind: options.kind }),
      ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
    },
    parent,
  );
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      recordSpanError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Like inSpan, but the span is not made the active one: for a leaf operation, under which
 * nothing starts spans of its own, it saves entering a context (on Node.js 20 an
 * AsyncLocalStorage run) per call. `work` gets the span to annotate.
 */
export function inLeafSpan<T>(
  name: string,
  options: InSpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const span = chunklogTracer().startSpan(
    name,
    {
      ...(options.kind === undefined ? {} : { kind: options.kind }),
      ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
    },
    options.parent ?? context.active(),
  );
  return work(span).then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      recordSpanError(span, error);
      span.end();
      throw error;
    },
  );
}

/** Marks a span as failed with `error`. */
export function recordSpanError(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
