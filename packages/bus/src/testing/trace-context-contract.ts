/**
 * The trace-context part of the Bus port's contract: a message carries the sender's active
 * span to the receiver, on every kind of delivery. Run by every adapter's test file.
 */
import { randomUUID } from 'node:crypto';
import { startMemoryTracing } from '@chunklog/runtime/testing';
import { type SpanContext, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '../bus';
import type { BusContractSetup } from './bus-contract';

const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;
const tracer = trace.getTracer('bus-trace-contract');

/** The span context a handler sees as active, or null outside any span. */
function activeSpanContext(): SpanContext | null {
  const span = trace.getActiveSpan();
  return span && trace.isSpanContextValid(span.spanContext()) ? span.spanContext() : null;
}

/** Runs `send` inside a new span; returns that span's context. */
async function inSenderSpan(send: () => Promise<unknown>): Promise<SpanContext> {
  return tracer.startActiveSpan('sender', async (span) => {
    try {
      await send();
      return span.spanContext();
    } finally {
      span.end();
    }
  });
}

/** Resolves with what `arm` passes to its callback, once. */
function firstSeen<T>(): { promise: Promise<T>; seen: (value: T) => void } {
  let seen!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    seen = resolve;
  });
  return { promise, seen };
}

export function busTraceContextContract(adapterName: string, setup: BusContractSetup): void {
  describe(`Bus contract, trace context: ${adapterName}`, () => {
    let bus: Bus;
    let peer: Bus;
    let stopTracing: () => Promise<void>;

    beforeAll(async () => {
      stopTracing = (await startMemoryTracing()).shutdown;
      bus = await setup.createBus();
      peer = await setup.createPeer(bus);
    });
    afterAll(async () => {
      if (peer !== bus) await peer?.close();
      await bus?.close();
      await stopTracing?.();
    });

    it("runs a subscriber's handler in the publisher's trace", async () => {
      const subject = `chunklog.tab.${unique('tab')}.evt.chunk-seal`;
      const received = firstSeen<SpanContext | null>();
      const subscription = await bus.subscribe(subject, () => received.seen(activeSpanContext()));
      const sent = await inSenderSpan(() => peer.publish(subject, { n: 1 }));
      const seen = await received.promise;
      await subscription.stop();
      expect(seen?.traceId).toBe(sent.traceId);
      expect(seen?.spanId).toBe(sent.spanId);
      expect(seen?.isRemote).toBe(true);
    });

    it("runs a serving handler in the requester's trace", async () => {
      const subject = `chunklog.tools.${unique('tool')}`;
      let seen: SpanContext | null = null;
      const subscription = await bus.serve(subject, async () => {
        seen = activeSpanContext();
        return 'ok';
      });
      const sent = await inSenderSpan(() => peer.request(subject, {}));
      await subscription.stop();
      expect(seen).not.toBeNull();
      expect(seen!.traceId).toBe(sent.traceId);
      expect(seen!.spanId).toBe(sent.spanId);
    });

    it("runs a work item's handler in the enqueuer's trace, on every delivery", async () => {
      const queue = unique('traced');
      const deliveries: Array<SpanContext | null> = [];
      const done = firstSeen<void>();
      const subscription = await bus.consume(queue, async (item) => {
        deliveries.push(activeSpanContext());
        if (item.deliveryCount === 1) {
          await item.nak();
          return;
        }
        await item.ack();
        done.seen();
      });
      const sent = await inSenderSpan(() => peer.enqueue(queue, { n: 1 }, { msgId: unique('m') }));
      await done.promise;
      await subscription.stop();
      expect(deliveries).toHaveLength(2);
      for (const seen of deliveries) {
        expect(seen?.traceId).toBe(sent.traceId);
        expect(seen?.spanId).toBe(sent.spanId);
      }
    });

    it('runs a handler outside any trace when the sender was in none', async () => {
      const subject = `chunklog.tab.${unique('tab')}.evt.chunk-seal`;
      const received = firstSeen<SpanContext | null>();
      const subscription = await bus.subscribe(subject, () => received.seen(activeSpanContext()));
      // Sent from inside a span of another trace, so an adapter that leaked the active context
      // instead of the message's would fail here.
      await tracer.startActiveSpan('unrelated', async (span) => {
        span.end();
      });
      await peer.publish(subject, { n: 1 });
      expect(await received.promise).toBeNull();
      await subscription.stop();
    });
  });
}
