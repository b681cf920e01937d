import {
  type Attributes,
  type Context,
  context,
  type SpanKind,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { chunklogTracer } from './in-span';
import { tracingActive } from './tracing-active';

/** A span whose interval is being measured; it is recorded after `end`. */
export interface DeferredSpan {
  /** Ends the interval, adding `attributes` to the span's. */
  end(attributes?: Attributes): void;
}

export interface DeferredSpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent's context; default the active one. */
  parent?: Context;
}

interface Ended {
  name: string;
  options: DeferredSpanOptions;
  parent: Context;
  startTime: number;
  endTime: number;
  attributes: Attributes | undefined;
}

const IGNORED: DeferredSpan = { end() {} };
let ended: Ended[] = [];
let drainScheduled = false;

/** Records the spans ended so far now (before tracing shuts down). */
export function drainDeferredSpans(): void {
  drainScheduled = false;
  const spans = ended;
  ended = [];
  const tracer = chunklogTracer();
  for (const { name, options, parent, startTime, endTime, attributes } of spans) {
    const span = tracer.startSpan(
      name,
      {
        ...(options.kind === undefined ? {} : { kind: options.kind }),
        attributes: { ...options.attributes, ...attributes },
        startTime,
      },
      parent,
    );
    span.end(endTime);
  }
}

/**
 * Measures a span's interval now and records it once the current I/O callbacks are done, so
 * short work on a latency path (relaying a seal) sends its writes before any span bookkeeping.
 * The span cannot be a parent; it costs nothing with tracing off or unsampled.
 */
export function startDeferredSpan(name: string, options: DeferredSpanOptions = {}): DeferredSpan {
  if (!tracingActive()) return IGNORED;
  const parent = options.parent ?? context.active();
  const parentContext = trace.getSpanContext(parent);
  if (parentContext !== undefined && (parentContext.traceFlags & TraceFlags.SAMPLED) === 0) {
    return IGNORED;
  }
  const startTime = performance.now();
  return {
    end(attributes) {
      ended.push({ name, options, parent, startTime, endTime: performance.now(), attributes });
      if (!drainScheduled) {
        drainScheduled = true;
        setImmediate(drainDeferredSpans);
      }
    },
  };
}
