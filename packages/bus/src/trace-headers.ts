import { type Context, context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';

/** A message's trace-context headers (W3C `traceparent`, `tracestate`) by lower-case name. */
export type TraceHeaders = Record<string, string>;

/**
 * The active trace context as message headers, written by the propagator the process registered
 * (W3C trace context when tracing is on); undefined when there is nothing to carry, as with
 * tracing off, so a message then goes without headers.
 */
export function activeTraceHeaders(): TraceHeaders | undefined {
  const carrier: TraceHeaders = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The context a received message's handler runs in: the sender's trace, or none. */
export function traceContextOf(headers: TraceHeaders | undefined): Context {
  return headers === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, headers);
}
