/**
 * What tracing costs, on versus off in one run against the real Postgres and NATS, where the
 * spans are exported over OTLP/HTTP (protobuf, the default) in batches (the SDK's batch
 * processor) to a receiver in a process of its own, as they would be to a collector; the
 * receiver only counts them, and the run fails if fewer arrive than the traced appends made
 * (spans dropped would make tracing look cheaper than it is):
 *
 * - trace.gateway.latency_overhead.p50_ms.off / .on: gateway.latency_overhead.p50_ms (seal
 *   published → SSE client p50, less the raw NATS publish → subscriber p50) of two gateway
 *   processes on one database, one without tracing, one with; samples alternate between them,
 *   so load on the shared machine hits both alike. The seals carry a `traceparent`, as a
 *   worker's do, so the traced gateway records a relay span per seal.
 * - trace.gateway.overhead_ratio: on ÷ off.
 * - trace.store.append.per_s.off / .on: single-chunk `store.append` (group commit) at 8
 *   appenders over 200 tabs, phases alternating over several rounds (each round in another
 *   order), tracing started and stopped in this process between them (every append a span); the
 *   median of the phases.
 * - trace.store.overhead_ratio: off ÷ on, the median over rounds of that round's ratio.
 * - trace.store.append.per_s.spans_only and trace.store.overhead_ratio.spans_only: a third phase
 *   in each round, where the SDK makes and ends every span but hands it to no processor (nothing
 *   exported): what the spans cost by themselves, apart from exporting them.
 * - trace.store.main_cpu_us_per_append.off / .spans_only / .on and
 *   trace.store.process_cpu_us_per_append.off / .spans_only / .on: CPU time per append in those
 *   phases, of this process's main thread and of all its threads (garbage collection,
 *   compilers), the median of the phases; a traced phase's count includes exporting the spans
 *   still buffered when it ends. Steadier than the rates on a shared machine: they say where
 *   tracing's cost goes when the ratio swings from run to run. The main thread's figure needs
 *   Node.js 24 (process.threadCpuUsage); without it, it is absent.
 * - trace.overhead_ratio: the larger of the two ratios (goal ≤ 1.05).
 */
import { createNatsBus, natsLatency } from '@chunklog/bus';
import { inSpan, startTracing, type Tracing } from '@chunklog/runtime';
import { createPostgresStore } from '@chunklog/store';
import { textChunk } from '@chunklog/store/testing';
import {
  createTestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import { startGatewayProcess } from './gateway-process';
import { startOtlpReceiverProcess } from './otlp-receiver-process';
import { median, percentile } from './percentile';
import { openSealProbe } from './seal-probe';
import { rate } from './timed-rate';

const KEY = 'bench-key-0123456789';
const LATENCY_SAMPLES = 400;
const WARM_UP = 20;
const APPENDERS = 8;
const TABS = 200;
const ROUNDS = 12;
const PHASE_MS = 700;

/** This thread's CPU time in µs: Node.js 24's process.threadCpuUsage, else undefined. */
function threadCpu(): number | undefined {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.();
  return usage === undefined ? undefined : usage.user + usage.system;
}

export default async function traceBench(): Promise<Record<string, number>> {
  const [postgresUrl, natsUrl] = await Promise.all([testPostgresUrl(), testNatsUrl()]);
  if (!postgresUrl || !natsUrl) throw new Error('the trace bench needs Postgres and NATS');
  const receiver = await startOtlpReceiverProcess();
  const database = await createTestDatabase(postgresUrl);
  const subjectPrefix = testSubjectPrefix();
  const gatewayInput = { databaseUrl: database.url, natsUrl, subjectPrefix, key: KEY };
  const untraced = await startGatewayProcess(gatewayInput);
  const traced = await startGatewayProcess({
    ...gatewayInput,
    environment: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
  });
  const store = createPostgresStore({ url: database.url, maxConnections: APPENDERS });
  const bus = await createNatsBus({ servers: natsUrl, subjectPrefix, name: 'bench-worker' });
  // The publisher traces too (without exporting), so its seals carry a traceparent.
  let publisherTracing: Tracing | null = await startTracing({
    serviceName: 'chunklog-bench',
    spanProcessors: [],
  });
  try {
    const nats = await natsLatency({ servers: natsUrl, samples: 1_000 });
    const around = (publish: () => Promise<void>) => inSpan('bench.publish', {}, publish);
    const probes = {
      off: await openSealProbe({
        baseUrl: untraced.baseUrl,
        key: KEY,
        tabId: await untraced.createTab(),
        store,
        bus,
        around,
      }),
      on: await openSealProbe({
        baseUrl: traced.baseUrl,
        key: KEY,
        tabId: await traced.createTab(),
        store,
        bus,
        around,
      }),
    };
    const durations = { off: [] as number[], on: [] as number[] };
    for (let index = 0; index < LATENCY_SAMPLES + WARM_UP; index++) {
      // Alternating which goes first, so neither always follows the other's work.
      const order = index % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const mode of order) {
        const duration = await probes[mode].sample();
        if (index >= WARM_UP) durations[mode].push(duration);
      }
    }
    probes.off.close();
    probes.on.close();
    await publisherTracing.shutdown();
    publisherTracing = null;
    const overhead = (samples: number[]) =>
      percentile(
        [...samples].sort((a, b) => a - b),
        0.5,
      ) - nats.p50Ms;
    const gatewayOff = overhead(durations.off);
    const gatewayOn = overhead(durations.on);

    // The store in this process, its spans exported by the SDK's OTLP exporter, which reads
    // the endpoint from the environment.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    const tenant = await store.createTenant({ name: `bench-${subjectPrefix}` });
    const tabs = await Promise.all(
      Array.from({ length: TABS }, async () => (await store.createTab({ tenantId: tenant.id })).id),
    );
    let tracedAppends = 0;
    let appends = 0;
    let tracingOn = false;
    const appendOne = async () => {
      const tabId = tabs[Math.floor(Math.random() * tabs.length)]!;
      await store.append(tabId, [textChunk(tabId, 'x'.repeat(200))]);
      appends += 1;
      if (tracingOn) tracedAppends += 1;
      return 1;
    };
    type Mode = 'off' | 'spans' | 'on';
    const series = () => ({ off: [] as number[], spans: [] as number[], on: [] as number[] });
    const rates = series();
    const cpu = { main: series(), process: series() };
    const ratios: number[] = [];
    const spansOnlyRatios: number[] = [];
    /** Runs `phase`, recording the CPU its appends took, in µs per append, under `mode`. */
    const withCpu = async (mode: Mode, phase: () => Promise<number>) => {
      const appendsBefore = appends;
      const mainBefore = threadCpu();
      const processBefore = process.cpuUsage();
      const perSecond = await phase();
      const count = appends - appendsBefore;
      const processUsed = process.cpuUsage(processBefore);
      cpu.process[mode].push((processUsed.user + processUsed.system) / count);
      const mainAfter = threadCpu();
      if (mainBefore !== undefined && mainAfter !== undefined) {
        cpu.main[mode].push((mainAfter - mainBefore) / count);
      }
      return perSecond;
    };
    const untracedPhase = () => withCpu('off', () => rate(PHASE_MS, APPENDERS, appendOne));
    // Spans made and ended by the SDK, and handed to no processor: nothing exported.
    const spansOnlyPhase = async () => {
      const tracing = await startTracing({ serviceName: 'chunklog-bench', spanProcessors: [] });
      return withCpu('spans', async () => {
        const perSecond = await rate(PHASE_MS, APPENDERS, appendOne);
        await tracing.shutdown();
        return perSecond;
      });
    };
    const tracedPhase = async () => {
      const tracing = await startTracing({ serviceName: 'chunklog-bench' });
      return withCpu('on', async () => {
        tracingOn = true;
        const perSecond = await rate(PHASE_MS, APPENDERS, appendOne);
        tracingOn = false;
        await tracing.shutdown();
        return perSecond;
      });
    };
    const phases = { off: untracedPhase, spans: spansOnlyPhase, on: tracedPhase };
    const orders: Mode[][] = [
      ['off', 'spans', 'on'],
      ['on', 'spans', 'off'],
      ['spans', 'on', 'off'],
      ['off', 'on', 'spans'],
      ['spans', 'off', 'on'],
      ['on', 'off', 'spans'],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      // Each order of the three in turn, so none always follows another's work.
      const perSecond = { off: 0, spans: 0, on: 0 };
      for (const mode of orders[round % orders.length]!) {
        perSecond[mode] = await phases[mode]();
        rates[mode].push(perSecond[mode]);
      }
      ratios.push(perSecond.off / perSecond.on);
      spansOnlyRatios.push(perSecond.off / perSecond.spans);
    }
    const storeRatio = median(ratios);
    const gatewayRatio = gatewayOn / gatewayOff;
    const received = await receiver.count();
    console.log(`spans received: ${received}, traced appends: ${tracedAppends}`);
    if (received < tracedAppends) {
      throw new Error(`only ${received} spans arrived for ${tracedAppends} traced appends`);
    }

    return {
      'trace.gateway.latency_overhead.p50_ms.off': gatewayOff,
      'trace.gateway.latency_overhead.p50_ms.on': gatewayOn,
      'trace.gateway.overhead_ratio': gatewayRatio,
      'trace.store.append.per_s.off': median(rates.off),
      'trace.store.append.per_s.on': median(rates.on),
      'trace.store.append.per_s.spans_only': median(rates.spans),
      'trace.store.overhead_ratio': storeRatio,
      'trace.store.overhead_ratio.spans_only': median(spansOnlyRatios),
      ...(cpu.main.on.length > 0
        ? {
            'trace.store.main_cpu_us_per_append.off': median(cpu.main.off),
            'trace.store.main_cpu_us_per_append.spans_only': median(cpu.main.spans),
            'trace.store.main_cpu_us_per_append.on': median(cpu.main.on),
          }
        : {}),
      'trace.store.process_cpu_us_per_append.off': median(cpu.process.off),
      'trace.store.process_cpu_us_per_append.spans_only': median(cpu.process.spans),
      'trace.store.process_cpu_us_per_append.on': median(cpu.process.on),
      'trace.overhead_ratio': Math.max(gatewayRatio, storeRatio),
    };
  } finally {
    await publisherTracing?.shutdown();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await Promise.all([untraced.stop(), traced.stop()]);
    await bus.close();
    await store.close();
    await database.drop();
    await receiver.close();
  }
}
