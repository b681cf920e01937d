/**
 * Tracing in the services mode: a gateway and a worker as separate processes (the real entry
 * points) on real Postgres and NATS, each exporting its spans over OTLP/HTTP to a receiver in
 * this process. One message's spans must form one tree: the gateway's request, the worker's
 * intake, turn, model steps (with the SDK's own span), tool call and appends, and the gateway's
 * relay of each seal to the stream watching the tab.
 */
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@chunklog/runtime/testing';
import { testNatsUrl, testPostgresUrl } from '@chunklog/test-infra';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createE2eBackend, type E2eBackend, type E2eGateway } from './e2e-backend';
import { GatewayClient } from './gateway-client';
import { openLedgerEventSource } from './ledger-event-source';
import type { ServiceProcess } from './service-process';
import { StreamLedger } from './stream-ledger';

const postgresUrl = await testPostgresUrl();
const natsUrl = await testNatsUrl();
const reachable = postgresUrl !== null && natsUrl !== null;
if (!reachable) console.warn('!!! SKIPPED: the tracing suite needs a real Postgres and NATS');

/** Polls until `ready` holds for the spans received so far; returns them. */
async function spansWhen(
  receiver: OtlpReceiver,
  ready: (spans: ReceivedSpan[]) => boolean,
  timeoutMs: number,
): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const spans = receiver.spans();
    if (ready(spans)) return spans;
    if (Date.now() > deadline) {
      throw new Error(
        `spans incomplete after ${timeoutMs} ms: ${spans.map((span) => `${span.service}:${span.name}`).join(', ')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!reachable)('tracing across a gateway and a worker process', () => {
  let receiver: OtlpReceiver;
  let backend: E2eBackend;
  let gateway: E2eGateway;
  let worker: ServiceProcess;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const tracing = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      // Export within a fraction of a second of a span's end, not the default five seconds.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    backend = await createE2eBackend({
      postgresUrl: postgresUrl!,
      natsUrl: natsUrl!,
      leaseMs: 5_000,
    });
    gateway = await backend.startGateway({ environment: tracing });
    // Debug lines too: the claim's "lease acquired" is written inside the message's trace.
    worker = await backend.startWorker({
      workerId: 'traced-worker',
      environment: { ...tracing, LOG_LEVEL: 'debug' },
    });
  });

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => console.info(backend.processOutputs()));
  });

  afterAll(async () => {
    await backend?.close();
    await receiver?.close();
  });

  it("joins one message's spans from both processes into one tree rooted at its request", async () => {
    const client = new GatewayClient(gateway.baseUrl, backend.tenants.alpha.key);
    const tabId = await client.createTab('traced');
    const ledger = new StreamLedger();
    const stream = openLedgerEventSource(
      `${gateway.baseUrl}/v1/tabs/${tabId}/events`,
      ledger,
      client.authorization,
    );
    await stream.opened;
    try {
      await client.sendMessage(tabId, 'what time is it [[sim: tool get_time {}]] [[sim: words 8]]');
      await ledger.waitUntil(() => ledger.turnsDone.length === 1, 30_000, 'turn-done');
    } finally {
      stream.close();
    }
    const chunks = await client.readAllChunks(tabId);
    expect(chunks.map((chunk) => chunk.type)).toEqual(['text', 'tool_call', 'tool_result', 'text']);

    const isMessageRequest = (span: ReceivedSpan) =>
      span.service === 'chunklog-gateway' && span.name === 'POST /v1/tabs/:tabId/messages';
    const inTrace = (spans: ReceivedSpan[]) => {
      const root = spans.find(isMessageRequest);
      return root === undefined ? [] : spans.filter((span) => span.traceId === root.traceId);
    };
    // The turn ends after its last append; the gateway relays the last seal a moment later.
    const spans = inTrace(
      await spansWhen(
        receiver,
        (received) => {
          const trace = inTrace(received);
          return (
            trace.some((span) => span.name === 'chunklog.turn') &&
            trace.filter((span) => span.name === 'chunklog.seal_relay').length >= chunks.length
          );
        },
        20_000,
      ),
    );

    // One tree: a single root (the request, no caller's traceparent), every other span's
    // parent in the same trace, whichever process recorded it.
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const roots = spans.filter((span) => span.parentSpanId === undefined);
    expect(roots.map((span) => span.name)).toEqual(['POST /v1/tabs/:tabId/messages']);
    const orphans = spans.filter(
      (span) => span.parentSpanId !== undefined && !byId.has(span.parentSpanId),
    );
    expect(orphans.map((span) => span.name)).toEqual([]);
    const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId ?? '');
    const one = (name: string) => {
      const found = spans.filter((span) => span.name === name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };

    // The worker continues the request's trace from the intake queue's message headers.
    const intake = one('chunklog.intake');
    expect(intake.service).toBe('chunklog-worker');
    expect(parentOf(intake)).toBe(roots[0]);
    const turn = one('chunklog.turn');
    expect(parentOf(turn)).toBe(intake);
    expect(turn.attributes).toMatchObject({
      'chunklog.tab_id': tabId,
      'chunklog.turn.reason': 'completed',
    });

    // Two model steps (the tool call, then the answer), each the parent of the SDK's own span.
    const steps = spans.filter((span) => span.name === 'chunklog.model_step');
    expect(steps).toHaveLength(2);
    for (const step of steps) {
      expect(parentOf(step)).toBe(turn);
      expect(step.attributes).toMatchObject({
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4-6',
      });
      expect(step.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(step.attributes).toHaveProperty('gen_ai.usage.cache_read.input_tokens');
      const sdkSpans = spans.filter(
        (span) => span.name === 'anthropic.messages.create' && span.parentSpanId === step.spanId,
      );
      expect(sdkSpans).toHaveLength(1);
    }
    const tool = one('execute_tool get_time');
    expect(parentOf(tool)).toBe(turn);
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.name': 'get_time' });

    // An append span per append, on the worker, told its group-commit batch.
    const appends = spans.filter((span) => span.name === 'chunklog.store.append');
    expect(appends.length).toBeGreaterThanOrEqual(chunks.length);
    for (const append of appends) {
      expect(append.service).toBe('chunklog-worker');
      expect(append.attributes['chunklog.append.batch_size']).toBeGreaterThanOrEqual(1);
    }
    expect(appends.some((append) => parentOf(append) === tool)).toBe(true);

    // Back on the gateway: each seal's relay to the open stream, in the trace that sealed it.
    const relays = spans.filter((span) => span.name === 'chunklog.seal_relay');
    expect(relays.map((relay) => relay.service)).toEqual(chunks.map(() => 'chunklog-gateway'));
    expect(new Set(relays.map((relay) => relay.attributes['chunklog.chunk_id']))).toEqual(
      new Set(chunks.map((chunk) => chunk.id)),
    );
    for (const relay of relays) expect(parentOf(relay)?.service).toBe('chunklog-worker');

    // The trace id is in the worker's log lines written inside the trace.
    expect(worker.output()).toMatch(
      new RegExp(`"trace_id":"${roots[0]!.traceId}"[^\\n]*"msg":"lease acquired"`),
    );
  }, 150_000);
});
