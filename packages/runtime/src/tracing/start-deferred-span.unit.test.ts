import { context, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MemoryTracing, startMemoryTracing } from '../testing/start-memory-tracing';
import { startDeferredSpan } from './start-deferred-span';
import { startTracing } from './start-tracing';
import { tracingActive } from './tracing-active';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function busyFor(milliseconds: number): void {
  const until = performance.now() + milliseconds;
  while (performance.now() < until) {
    // the measured work
  }
}

describe('startDeferredSpan', () => {
  it('records nothing with tracing off', async () => {
    expect(tracingActive()).toBe(false);
    startDeferredSpan('off').end();
    await nextTurn();
    expect(tracingActive()).toBe(false);
  });

  describe('with tracing on', () => {
    let tracing: MemoryTracing;
    beforeAll(async () => {
      tracing = await startMemoryTracing();
    });
    afterAll(() => tracing.shutdown());
    beforeEach(() => tracing.reset());

    it('records the measured interval as a child of the active span, after the current turn', async () => {
      const tracer = trace.getTracer('test');
      const parent = tracer.startSpan('parent');
      const before = performance.timeOrigin + performance.now();
      context.with(trace.setSpan(context.active(), parent), () => {
        const relay = startDeferredSpan('relay', {
          kind: SpanKind.PRODUCER,
          attributes: { 'chunklog.seq': 7 },
        });
        busyFor(5);
        relay.end({ 'chunklog.streams': 2 });
      });
      const after = performance.timeOrigin + performance.now();
      parent.end();
      expect(tracing.spans().map((span) => span.name)).toEqual(['parent']);

      await nextTurn();
      const relay = tracing.spans().find((span) => span.name === 'relay');
      expect(relay).toBeDefined();
      expect(relay!.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(relay!.spanContext().traceId).toBe(parent.spanContext().traceId);
      expect(relay!.kind).toBe(SpanKind.PRODUCER);
      expect(relay!.attributes).toEqual({ 'chunklog.seq': 7, 'chunklog.streams': 2 });
      // The interval measured around the work, not the moment the span was recorded.
      const start = hrTimeToMilliseconds(relay!.startTime);
      const end = hrTimeToMilliseconds(relay!.endTime);
      expect(start).toBeGreaterThanOrEqual(before - 1);
      expect(end).toBeLessThanOrEqual(after + 1);
      expect(end - start).toBeGreaterThanOrEqual(4.5);
    });

    it('records nothing in a trace that is not sampled', async () => {
      const unsampled = trace.wrapSpanContext({
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: TraceFlags.NONE,
      });
      startDeferredSpan('relay', { parent: trace.setSpan(context.active(), unsampled) }).end();
      await nextTurn();
      expect(tracing.spans()).toEqual([]);
    });

    it('records the spans still queued when tracing shuts down', async () => {
      await tracing.shutdown();
      const ended: string[] = [];
      const collecting = await startTracing({
        serviceName: 'chunklog-test',
        spanProcessors: [
          {
            onStart() {},
            onEnd: (span) => ended.push(span.name),
            forceFlush: async () => {},
            shutdown: async () => {},
          },
        ],
      });
      startDeferredSpan('last').end();
      await collecting.shutdown();
      expect(ended).toEqual(['last']);
      tracing = await startMemoryTracing();
    });
  });
});
