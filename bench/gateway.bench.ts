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
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { createNatsBus, natsLatency } from '@chunklog/bus';
import { type Chunk, liveEventSubject } from '@chunklog/chunk-core';
import { createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  freePort,
  sleep,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import { percentile } from './percentile';

const LATENCY_SAMPLES = 500;
const FANOUT_CLIENTS = 1_000;
const FANOUT_EVENTS = 100;
const IDLE_CLIENTS = 5_000;
const KEY = 'bench-key-0123456789';

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
}

interface SseConnection {
  close(): void;
}

/** A bare SSE client: calls onEvent with each raw event block as it arrives. */
function openSse(url: string, onEvent?: (block: string) => void): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, headers: { authorization: `Bearer ${KEY}` } });
    request.once('error', reject);
    request.once('response', (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`stream refused: ${response.statusCode}`));
        response.resume();
        return;
      }
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => {
        if (!onEvent) return;
        buffer += part;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          onEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
      });
      response.on('error', () => {});
      resolve({ close: () => request.destroy() });
    });
  });
}

export default async function gatewayBench(): Promise<Record<string, number>> {
  const [postgresUrl, natsUrl] = await Promise.all([testPostgresUrl(), testNatsUrl()]);
  if (!postgresUrl || !natsUrl) throw new Error('the gateway bench needs Postgres and NATS');
  const database = await createTestDatabase(postgresUrl);
  const subjectPrefix = testSubjectPrefix();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const gatewayProcess: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('../services/gateway/src/main.ts', import.meta.url))],
    {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        NATS_URL: natsUrl,
        NATS_SUBJECT_PREFIX: subjectPrefix,
        PORT: String(port),
        API_KEYS: `bench:${KEY}`,
        STREAM_TICKET_SECRET: 'bench-ticket-secret-0123456789',
        RATE_LIMIT_PER_MINUTE: '1000000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const store = createPostgresStore({ url: database.url });
  const bus = await createNatsBus({ servers: natsUrl, subjectPrefix, name: 'bench-worker' });
  const connections: SseConnection[] = [];
  try {
    for (let attempt = 0; ; attempt++) {
      const ready = await fetch(`${baseUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (attempt > 300) throw new Error('gateway did not become ready');
      await sleep(100);
    }
    const createTab = async () => {
      const response = await fetch(`${baseUrl}/v1/tabs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return ((await response.json()) as { tab: { id: string } }).tab.id;
    };

    // 1. Raw NATS, the floor.
    const nats = await natsLatency({ servers: natsUrl, samples: 1_000 });

    // 2. Seal published → SSE client, one in flight at a time.
    const latencyTab = await createTab();
    const turnId = randomUUID();
    let arrived: ((seq: number) => void) | undefined;
    connections.push(
      await openSse(`${baseUrl}/v1/tabs/${latencyTab}/events`, (block) => {
        const id = /^id: (\d+)$/m.exec(block);
        if (id) arrived?.(Number(id[1]));
      }),
    );
    await sleep(200);
    const durations: number[] = [];
    for (let index = 0; index < LATENCY_SAMPLES + 20; index++) {
      const [chunk] = (await store.append(latencyTab, [
        {
          id: randomUUID(),
          tabId: latencyTab,
          turnId,
          step: 0,
          role: 'assistant',
          type: 'text',
          data: { text: `sealed block number ${index}` },
        },
      ])) as [Chunk];
      const received = new Promise<void>((resolve) => {
        arrived = (seq) => {
          if (seq === chunk.seq) resolve();
        };
      });
      const started = performance.now();
      await bus.publish(liveEventSubject(latencyTab, 'chunk-seal'), { tabId: latencyTab, chunk });
      await received;
      // The first few warm up JIT, connections and caches.
      if (index >= 20) durations.push(performance.now() - started);
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
        openSse(`${baseUrl}/v1/tabs/${idleTabs[(start + index) % idleTabs.length]}/events`),
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
        openSse(`${baseUrl}/v1/tabs/${fanoutTab}/events`, (block) => {
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
      turnId,
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
    gatewayProcess.kill('SIGTERM');
    await new Promise((resolve) => gatewayProcess.once('exit', resolve));
    await bus.close();
    await store.close();
    await database.drop();
  }
}
