/**
 * Gateway figures, all in one run against the real Postgres and NATS, with the gateway as its
 * own process (`services/gateway/src/main.ts`, as deployed) and the clients in this one:
 *
 * - gateway.seal_to_client.p50_ms / .p99_ms: a worker-side `chunk-seal` published on NATS →
 *   received by an SSE client (one in flight at a time).
 * - nats.pub_to_sub.p50_ms: raw NATS publish → subscriber, same machine, same run.
 * - gateway.latency_overhead.p50_ms: the difference of the two p50s (goal ≤ 1.0).
 * - gateway.sse.deliveries_per_s: events × clients ÷ time, 1,000 SSE clients on one tab.
 * - gateway.sse.kb_per_connection: growth of the gateway process's RSS ÷ connections, at
 *   5,000 idle SSE clients (goal ≤ 20).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createNatsBus, natsLatency } from '@chunklog/bus';
import { liveEventSubject } from '@chunklog/chunk-core';
import { createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  sleep,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import { startGatewayProcess } from './gateway-process';
import { percentile } from './percentile';
import { openSealProbe } from './seal-probe';
import { openSse, type SseConnection } from './sse-client';

const LATENCY_SAMPLES = 500;
const FANOUT_CLIENTS = 1_000;
const FANOUT_EVENTS = 100;
const IDLE_CLIENTS = 5_000;
const KEY = 'bench-key-0123456789';

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
}

export default async function gatewayBench(): Promise<Record<string, number>> {
  const [postgresUrl, natsUrl] = await Promise.all([testPostgresUrl(), testNatsUrl()]);
  if (!postgresUrl || !natsUrl) throw new Error('the gateway bench needs Postgres and NATS');
  const database = await createTestDatabase(postgresUrl);
  const subjectPrefix = testSubjectPrefix();
  const gateway = await startGatewayProcess({
    databaseUrl: database.url,
    natsUrl,
    subjectPrefix,
    key: KEY,
  });
  const gatewayProcess = gateway.process;
  const baseUrl = gateway.baseUrl;
  const store = createPostgresStore({ url: database.url });
  const bus = await createNatsBus({ servers: natsUrl, subjectPrefix, name: 'bench-worker' });
  const connections: SseConnection[] = [];
  try {
    const createTab = gateway.createTab;

    // 1. Raw NATS, the floor.
    const nats = await natsLatency({ servers: natsUrl, samples: 1_000 });

    // 2. Seal published → SSE client, one in flight at a time.
    const probe = await openSealProbe({
      baseUrl,
      key: KEY,
      tabId: await createTab(),
      store,
      bus,
    });
    connections.push(probe);
    const durations: number[] = [];
    for (let index = 0; index < LATENCY_SAMPLES + 20; index++) {
      const duration = await probe.sample();
      // The first few warm up JIT, connections and caches.
      if (index >= 20) durations.push(duration);
    }
    durations.sort((a, b) => a - b);
    const sealP50 = percentile(durations, 0.5);
    const sealP99 = percentile(durations, 0.99);

    // 3. RSS per idle connection, before the fan-out run grows the heap.
    const idleTabs = await Promise.all(Array.from({ length: 50 }, () => createTab()));
    await sleep(500);
    const rssBefore = rssKb(gatewayProcess.pid!);
    const idle: SseConnection[] = [];
    for (let start = 0; start < IDLE_CLIENTS; start += 250) {
      const batch = Array.from({ length: Math.min(250, IDLE_CLIENTS - start) }, (_, index) =>
        openSse(`${baseUrl}/v1/tabs/${idleTabs[(start + index) % idleTabs.length]}/events`, KEY),
      );
      idle.push(...(await Promise.all(batch)));
    }
    await sleep(1_000);
    const rssAfter = rssKb(gatewayProcess.pid!);
    const kbPerConnection = (rssAfter - rssBefore) / IDLE_CLIENTS;
    for (const connection of idle) connection.close();
    await sleep(500);

    // 4. Fan-out: 1,000 clients on one tab, FANOUT_EVENTS deltas as fast as they go.
    const fanoutTab = await createTab();
    const blockId = randomUUID();
    let delivered = 0;
    let opened = 0;
    let allDelivered: (() => void) | undefined;
    const target = FANOUT_CLIENTS * FANOUT_EVENTS;
    const fanout: SseConnection[] = [];
    for (let start = 0; start < FANOUT_CLIENTS; start += 250) {
      const batch = Array.from({ length: 250 }, () =>
        openSse(`${baseUrl}/v1/tabs/${fanoutTab}/events`, KEY, (block) => {
          if (block.startsWith('event: chunk-open')) opened++;
          else if (block.startsWith('event: chunk-delta') && ++delivered === target)
            allDelivered?.();
        }),
      );
      fanout.push(...(await Promise.all(batch)));
    }
    await bus.publish(liveEventSubject(fanoutTab, 'chunk-open'), {
      tabId: fanoutTab,
      id: blockId,
      turnId: randomUUID(),
      step: 0,
      role: 'assistant',
      type: 'text',
    });
    for (let attempt = 0; opened < FANOUT_CLIENTS && attempt < 200; attempt++) await sleep(25);
    const text = 'a delta of about fifty characters of model text.. ';
    const done = new Promise<void>((resolve) => {
      allDelivered = resolve;
    });
    const fanoutStarted = performance.now();
    for (let index = 0; index < FANOUT_EVENTS; index++) {
      await bus.publish(liveEventSubject(fanoutTab, 'chunk-delta'), {
        tabId: fanoutTab,
        id: blockId,
        offset: index * text.length,
        text,
      });
    }
    await Promise.race([done, sleep(30_000)]);
    const fanoutSeconds = (performance.now() - fanoutStarted) / 1000;
    for (const connection of fanout) connection.close();

    return {
      'gateway.seal_to_client.p50_ms': sealP50,
      'gateway.seal_to_client.p99_ms': sealP99,
      'nats.pub_to_sub.p50_ms': nats.p50Ms,
      'gateway.latency_overhead.p50_ms': sealP50 - nats.p50Ms,
      'gateway.sse.deliveries_per_s': delivered / fanoutSeconds,
      'gateway.sse.kb_per_connection': kbPerConnection,
    };
  } finally {
    for (const connection of connections) connection.close();
    await gateway.stop();
    await bus.close();
    await store.close();
    await database.drop();
  }
}
