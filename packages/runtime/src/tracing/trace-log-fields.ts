import { context, trace } from '@opentelemetry/api';

/** Log fields naming a span: its trace, its own id and the W3C trace flags (hex). */
export interface TraceLogFields {
  trace_id?: string;
  span_id?: string;
  trace_flags?: string;
}

/**
 * The ids of the active span as log fields, the names OpenTelemetry's log data model gives them;
 * none outside a span or when tracing is off (the no-op API has no active span).
 */
export function traceLogFields(): TraceLogFields {
  const span = trace.getSpan(context.active());
  if (span === undefined) return {};
  const spanContext = span.spanContext();
  if (!trace.isSpanContextValid(spanContext)) return {};
  return {
    trace_id: spanContext.traceId,
    span_id: spanContext.spanId,
    trace_flags: spanContext.traceFlags.toString(16).padStart(2, '0'),
  };
}
