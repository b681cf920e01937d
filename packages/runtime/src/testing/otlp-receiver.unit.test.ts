import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver';

/** Exports a parent and a child span over OTLP/HTTP in the given encoding; returns their ids. */
async function exportTwoSpans(receiver: OtlpReceiver, encoding: 'protobuf' | 'json') {
  const url = `${receiver.endpoint}/v1/traces`;
  const exporter =
    encoding === 'protobuf' ? new ProtobufExporter({ url }) : new JsonExporter({ url });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'receiver-test' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('test');
  const parent = tracer.startSpan('parent');
  const child = tracer.startSpan(
    'child',
    { attributes: { text: 'é and ü', count: 300, flag: true, ratio: 0.25 } },
    trace.setSpan(context.active(), parent),
  );
  child.end();
  parent.end();
  await provider.forceFlush();
  await provider.shutdown();
  return { parent: parent.spanContext(), child: child.spanContext() };
}

describe.each(['protobuf', 'json'] as const)('the OTLP receiver over %s', (encoding) => {
  let receiver: OtlpReceiver | undefined;
  afterEach(async () => {
    await receiver?.close();
  });

  it('reads the ids, the parent, the name, the attributes and the service of each span', async () => {
    receiver = await startOtlpReceiver();
    const ids = await exportTwoSpans(receiver, encoding);
    const spans = receiver.spans();
    expect(receiver.count()).toBe(2);
    expect(spans.find((span) => span.name === 'parent')).toEqual({
      service: 'receiver-test',
      traceId: ids.parent.traceId,
      spanId: ids.parent.spanId,
      parentSpanId: undefined,
      name: 'parent',
      attributes: {},
    });
    expect(spans.find((span) => span.name === 'child')).toEqual({
      service: 'receiver-test',
      traceId: ids.parent.traceId,
      spanId: ids.child.spanId,
      parentSpanId: ids.parent.spanId,
      name: 'child',
      attributes: { text: 'é and ü', count: 300, flag: true, ratio: 0.25 },
    });
  });

  it('only counts the spans with keepSpans: false', async () => {
    receiver = await startOtlpReceiver({ keepSpans: false });
    await exportTwoSpans(receiver, encoding);
    expect(receiver.count()).toBe(2);
    expect(receiver.spans()).toEqual([]);
  });
});
