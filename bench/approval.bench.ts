/**
 * Tool calls that wait for a person. `BENCH_APPROVAL_SECTIONS` (comma-separated: `resume`,
 * `waiting`) runs only those sections; unset, both.
 *
 * - approval.resume_ms.p50 / approval.message_ms.p50 (and their ratio): from a decision accepted
 *   (recorded and its wake-up on the intake queue, where the gateway answers 202) to the next
 *   model request leaving the worker, against a message accepted to its first model request;
 *   same worker, same run, fresh tabs. Goal: ratio <= 1.2.
 * - approval.cache_read_share.after_decision: of the prompt tokens of the first request after a
 *   decision, the share read from the prompt cache. Goal >= 0.95.
 * - approval.waiting.worker_rss_mb_per_1k: a worker process's RSS growth per 1,000 tabs waiting
 *   at once (BENCH_APPROVAL_TABS, default 10,000), with approval.waiting.leases_held (goal 0).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { createWorker } from '@chunklog/agent-worker';
import { createSimulator } from '@chunklog/anthropic-sim';
import { type Bus, createMemoryBus, createNatsBus } from '@chunklog/bus';
import {
  INTAKE_QUEUE,
  type LiveEvent,
  LiveEventSchema,
  type MessageCommand,
  tabEventsSubject,
} from '@chunklog/chunk-core';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import pg from 'pg';
import { pino } from 'pino';
import { median } from './percentile';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const system = `You approve payments. ${'Check each figure against the ledger before you answer. '.repeat(150)}`;
const CALL = 'Pay it [[sim: tool calculator {"expression":"6*7"}]]';

async function enqueue(bus: Bus, command: Omit<MessageCommand, 'acceptedAt'>): Promise<void> {
  await bus.enqueue(
    INTAKE_QUEUE,
    { ...command, acceptedAt: Date.now() },
    {
      msgId: command.chunkId,
    },
  );
}

/** What the gateway does on POST /approvals once it validated the decision: record, then wake. */
async function approveAll(store: ChunkStore, bus: Bus, tabId: string): Promise<void> {
  const waiting = await store.getWaiting(tabId);
  if (waiting === null) throw new Error(`tab ${tabId} waits for nothing`);
  await store.recordDecisions(
    tabId,
    waiting.calls.map((call) => ({
      callId: call.callId,
      turnId: waiting.turnId,
      chunkId: randomUUID(),
      decision: 'approve' as const,
      decidedBy: 'bench',
    })),
  );
  const chunkId = randomUUID();
  await enqueue(bus, {
    tabId,
    chunkId,
    text: '',
    mode: 'approval',
    cancelGeneration: await store.cancelGeneration(tabId),
  });
}

/** Resolves with the tab's next turn-done reason. */
function turnDone(bus: Bus, tabId: string): Promise<{ reason: string; stop(): Promise<void> }> {
  return new Promise((resolve) => {
    let stop: () => Promise<void> = async () => {};
    void bus
      .subscribe(tabEventsSubject(tabId), (payload, subject) => {
        const kind = subject.split('.').at(-1);
        const parsed = LiveEventSchema.safeParse({ event: kind, data: payload });
        if (parsed.success && parsed.data.event === 'turn-done') {
          const event = parsed.data as Extract<LiveEvent, { event: 'turn-done' }>;
          resolve({ reason: event.data.reason, stop });
        }
      })
      .then((subscription) => {
        stop = () => subscription.stop();
      });
  });
}

async function resumeSection(): Promise<Record<string, number>> {
  const postgresUrl = await testPostgresUrl();
  if (!postgresUrl) throw new Error('approval.bench needs the local Postgres (127.0.0.1:5432)');
  const database = await createTestDatabase(postgresUrl);
  const store = createPostgresStore({ url: database.url });
  const bus = createMemoryBus();
  const simulator = await createSimulator({ logger: () => {} });
  // Each request leaving the worker, by the bench's clock.
  const sent: number[] = [];
  const anthropic = new Anthropic({
    apiKey: 'bench',
    baseURL: simulator.url,
    maxRetries: 0,
    fetch: (input, init) => {
      sent.push(performance.now());
      return fetch(input, init);
    },
  });
  const worker = createWorker({
    store,
    bus,
    anthropic,
    workerId: 'bench-approval',
    leaseMs: 10_000,
    maxSteps: 10,
    model: 'claude-sonnet-4-6',
    logger: pino({ level: 'warn' }),
    approval: { tools: ['calculator'] },
  });
  const samples = Number(process.env.BENCH_APPROVAL_SAMPLES ?? 21);
  const message: number[] = [];
  const resume: number[] = [];
  const shares: number[] = [];
  try {
    await store.migrate();
    await worker.start();
    const tenant = await store.createTenant({ name: 'bench' });
    for (let sample = 0; sample <= samples; sample++) {
      const tab = await store.createTab({ tenantId: tenant.id, config: { system } });
      const paused = turnDone(bus, tab.id);
      const chunkId = randomUUID();
      await enqueue(bus, { tabId: tab.id, chunkId, text: CALL, mode: 'interrupt' });
      const accepted = performance.now();
      const pause = await paused;
      await pause.stop();
      if (pause.reason !== 'awaiting_approval') throw new Error(`no pause: ${pause.reason}`);
      const firstRequest = sent.find((at) => at >= accepted)!;
      const before = simulator.requests.length;
      const resumed = turnDone(bus, tab.id);
      await approveAll(store, bus, tab.id);
      const decided = performance.now();
      const end = await resumed;
      await end.stop();
      if (end.reason !== 'completed') throw new Error(`not resumed: ${end.reason}`);
      const nextRequest = sent.find((at) => at >= decided)!;
      // The first sample warms the worker and the database up.
      if (sample === 0) continue;
      message.push(firstRequest - accepted);
      resume.push(nextRequest - decided);
      const usage = (simulator.requests[before]?.usage ?? {}) as {
        input_tokens?: number | null;
        cache_read_input_tokens?: number | null;
        cache_creation_input_tokens?: number | null;
      };
      const read = usage.cache_read_input_tokens ?? 0;
      const total = read + (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
      shares.push(total === 0 ? 0 : read / total);
    }
  } finally {
    await worker.stop();
    await simulator.close();
    await bus.close();
    await store.close();
    await database.drop();
  }
  const messageP50 = median(message);
  const resumeP50 = median(resume);
  return {
    'approval.message_ms.p50': messageP50,
    'approval.resume_ms.p50': resumeP50,
    'approval.resume_ms.p50_ratio': resumeP50 / messageP50,
    'approval.cache_read_share.after_decision': Math.min(...shares),
  };
}

/** The resident set of a process, in MB, from /proc. */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((row) => row.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

async function waitingSection(): Promise<Record<string, number>> {
  const postgresUrl = await testPostgresUrl();
  const natsUrl = await testNatsUrl();
  if (!postgresUrl || !natsUrl) throw new Error('approval.bench needs Postgres and NATS');
  const tabs = Number(process.env.BENCH_APPROVAL_TABS ?? 10_000);
  const warmUp = 1_000;
  const database = await createTestDatabase(postgresUrl);
  const store = createPostgresStore({ url: database.url });
  await store.migrate();
  const subjectPrefix = testSubjectPrefix();
  const bus = await createNatsBus({ servers: natsUrl, subjectPrefix });
  const simulator = await createSimulator({ logger: () => {} });
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/agent-worker/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      NATS_URL: natsUrl,
      NATS_SUBJECT_PREFIX: subjectPrefix,
      SIMULATOR_URL: simulator.url,
      APPROVAL_TOOLS: 'calculator',
      // Info: the worker says it is ready at that level (a line per paused turn follows).
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let workerOutput = '';
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const waitingTabs = async () =>
    Number(
      (
        await client.query<{ n: string }>(
          'SELECT count(*) AS n FROM tabs WHERE waiting IS NOT NULL',
        )
      ).rows[0]!.n,
    );
  try {
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const read = (data: Buffer) => {
        output += data.toString();
        workerOutput = output.slice(-4_000);
        if (output.includes('agent worker ready')) resolve();
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${output}`)));
    });
    const tenant = await store.createTenant({ name: 'bench' });
    const pauseMany = async (count: number) => {
      const target = (await waitingTabs()) + count;
      for (let sent = 0; sent < count; sent += 100) {
        await Promise.all(
          Array.from({ length: Math.min(100, count - sent) }, async () => {
            const tab = await store.createTab({ tenantId: tenant.id });
            await enqueue(bus, {
              tabId: tab.id,
              chunkId: randomUUID(),
              text: CALL,
              mode: 'interrupt',
            });
          }),
        );
        // Keep the queue short: the worker pauses tabs about as fast as they are sent.
        while ((await waitingTabs()) < target - count + sent - 400) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      const deadline = Date.now() + 600_000;
      while ((await waitingTabs()) < target) {
        if (Date.now() > deadline)
          throw new Error(`only ${await waitingTabs()} of ${target} paused: ${workerOutput}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    await pauseMany(warmUp);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const before = rssMb(child.pid!);
    await pauseMany(tabs);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = rssMb(child.pid!);
    const leases = Number(
      (
        await client.query<{ n: string }>(
          'SELECT count(*) AS n FROM tabs WHERE lease_owner IS NOT NULL',
        )
      ).rows[0]!.n,
    );
    return {
      'approval.waiting.tabs': tabs,
      'approval.waiting.worker_rss_mb.before': before,
      'approval.waiting.worker_rss_mb.after': after,
      'approval.waiting.worker_rss_mb_per_1k': (after - before) / (tabs / 1000),
      'approval.waiting.leases_held': leases,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await client.end();
    await simulator.close();
    await bus.close();
    await store.close();
    await database.drop();
  }
}

export default async function approvalBench(): Promise<Record<string, number>> {
  const sections = (process.env.BENCH_APPROVAL_SECTIONS ?? 'resume,waiting').split(',');
  return {
    ...(sections.includes('resume') ? await resumeSection() : {}),
    ...(sections.includes('waiting') ? await waitingSection() : {}),
  };
}
