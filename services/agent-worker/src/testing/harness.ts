/**
 * Test wiring shared by the worker's suites: a real store (Postgres, or PGlite), a real bus
 * (NATS with its own subject prefix, or the in-process bus), the Anthropic simulator behind
 * the real SDK, a stand-in for the gateway's enqueue, and a recorder of live events.
 * Not a test itself; exported as `@chunklog/agent-worker/testing` for tests only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { createSimulator, type Simulator } from '@chunklog/anthropic-sim';
import { type Bus, createMemoryBus, createNatsBus } from '@chunklog/bus';
import {
  type Chunk,
  cancelSubject,
  INTAKE_QUEUE,
  type LiveEvent,
  LiveEventSchema,
  type MessageCommand,
  type NewChunk,
  type Tab,
  type TabConfig,
  type TurnDoneReason,
  userTextChunk,
} from '@chunklog/chunk-core';
import { type ApprovalDecisionRecord, type ChunkStore, createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  type TestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, type TestContext } from 'vitest';
import { createWorker, type Worker, type WorkerDependencies } from '../worker';

export interface Harness {
  store: ChunkStore;
  bus: Bus;
  simulator: Simulator;
  anthropic: Anthropic;
  /** Present in NATS mode, for child processes. */
  natsUrl?: string;
  subjectPrefix?: string;
  databaseUrl: string;
  tenantId: string;
  /** Every live event received, in order, per tab. */
  events: Map<string, LiveEvent[]>;
  newTab(config?: TabConfig): Promise<Tab>;
  /**
   * What the gateway does on POST /messages: a durable intake item with msgId = chunkId, stamped
   * with the tab's cancel generation (read from the store unless given, as a gateway that read it
   * before the store went down).
   */
  send(
    tabId: string,
    text: string,
    mode?: MessageCommand['mode'],
    cancelGeneration?: number,
  ): Promise<string>;
  /**
   * What the gateway does on POST /cancel: records the cancel, then publishes it (the fast path),
   * and wakes a paused turn.
   */
  cancel(tabId: string): Promise<number>;
  /**
   * What the gateway does on POST /approvals: records the decisions on the paused turn's calls,
   * then wakes the turn through the intake. Returns the calls decided already (nothing stored then).
   */
  decide(
    tabId: string,
    decisions: {
      callId: string;
      decision: 'approve' | 'deny';
      input?: Record<string, unknown>;
      reason?: string;
    }[],
  ): Promise<ApprovalDecisionRecord[]>;
  startWorker(overrides?: Partial<WorkerDependencies>): Promise<Worker>;
  /** The simulator's requests whose body contains `text` (a marker in the turn's message). */
  requestsMentioning(text: string): Simulator['requests'];
  /** Resolves once the tab has `count` turn-done events. */
  turnsDone(tabId: string, count: number, timeoutMs?: number): Promise<LiveEvent[]>;
  /** Waits for the tab's first turn-done, expects it to say `reason`, and returns the log then. */
  awaitTurnEnd(tabId: string, reason: TurnDoneReason): Promise<Chunk[]>;
  /** Runs `cleanup` when the harness closes, before it closes anything of its own. */
  onClose(cleanup: () => void): void;
  close(): Promise<void>;
}

export const fastRetry = {
  maxAttempts: 4,
  baseDelayMs: 20,
  maxDelayMs: 200,
  maxRetryAfterMs: 5_000,
};

/**
 * Null when the real servers the mode needs are unreachable (test/infra warns loudly).
 * `memory` runs on the in-process bus of the all-in-one mode; the store is the real Postgres
 * in both modes (PGlite takes ~25 s to boot on a loaded machine; the store's own contract
 * suite keeps it identical to Postgres).
 */
export async function createHarness(
  bus: 'nats' | 'memory' = 'nats',
  options: {
    /** The Postgres server to create the test database on (default: the shared test server). */
    postgresUrl?: string;
  } = {},
): Promise<Harness | null> {
  const postgresUrl = options.postgresUrl ?? (await testPostgresUrl());
  const natsUrl = bus === 'nats' ? await testNatsUrl() : undefined;
  if (!postgresUrl || natsUrl === null) return null;
  const database: TestDatabase = await createTestDatabase(postgresUrl);
  const store: ChunkStore = createPostgresStore({ url: database.url });
  const subjectPrefix = natsUrl ? testSubjectPrefix() : undefined;
  const theBus: Bus = natsUrl
    ? await createNatsBus({ servers: natsUrl, subjectPrefix: subjectPrefix! })
    : createMemoryBus();
  await store.migrate();
  const simulator = await createSimulator({ logger: () => {} });
  const anthropic = new Anthropic({ apiKey: 'test-key', baseURL: simulator.url, maxRetries: 0 });
  const tenantId = (await store.createTenant({ name: `tenant-${randomUUID()}` })).id;
  const events = new Map<string, LiveEvent[]>();
  const waiters = new Set<() => void>();
  const subscription = await theBus.subscribe('chunklog.tab.*.evt.*', (payload, subject) => {
    const [, tabId, kind] = /chunklog\.tab\.([^.]+)\.evt\.([^.]+)$/.exec(subject) ?? [];
    const parsed = LiveEventSchema.safeParse({ event: kind, data: payload });
    if (!parsed.success || !tabId) return;
    const list = events.get(tabId) ?? [];
    list.push(parsed.data);
    events.set(tabId, list);
    for (const waiter of waiters) waiter();
  });
  const workers: Worker[] = [];
  const wake = async (tabId: string, cancelGeneration: number) => {
    const chunkId = randomUUID();
    const command: MessageCommand = {
      tabId,
      chunkId,
      text: '',
      mode: 'approval',
      acceptedAt: Date.now(),
      cancelGeneration,
    };
    await theBus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId });
  };
  const cleanups: (() => void)[] = [];

  const harness: Harness = {
    store,
    bus: theBus,
    simulator,
    anthropic,
    ...(natsUrl ? { natsUrl } : {}),
    ...(subjectPrefix ? { subjectPrefix } : {}),
    databaseUrl: database.url,
    tenantId,
    events,
    newTab: (config) => store.createTab({ tenantId, title: 'test', ...(config ? { config } : {}) }),
    async send(tabId, text, mode = 'interrupt', cancelGeneration) {
      const chunkId = randomUUID();
      const command: MessageCommand = {
        tabId,
        chunkId,
        text,
        mode,
        acceptedAt: Date.now(),
        cancelGeneration: cancelGeneration ?? (await store.cancelGeneration(tabId)),
      };
      await theBus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId });
      return chunkId;
    },
    async cancel(tabId) {
      const generation = await store.requestCancel(tabId);
      await theBus.publish(cancelSubject(tabId), { tabId, generation });
      if ((await store.getWaiting(tabId)) !== null) await wake(tabId, generation);
      return generation;
    },
    async decide(tabId, decisions) {
      const waiting = await store.getWaiting(tabId);
      if (waiting === null) throw new Error(`tab ${tabId} has no paused turn`);
      const { conflicts } = await store.recordDecisions(
        tabId,
        decisions.map((decision) => ({
          ...decision,
          turnId: waiting.turnId,
          chunkId: randomUUID(),
          decidedBy: 'test',
        })),
      );
      if (conflicts.length === 0) await wake(tabId, await store.cancelGeneration(tabId));
      return conflicts;
    },
    async startWorker(overrides = {}) {
      const worker = createWorker({
        store,
        bus: theBus,
        anthropic,
        workerId: `worker-${randomUUID().slice(0, 8)}`,
        leaseMs: 2_000,
        maxSteps: 10,
        model: 'claude-sonnet-4-6',
        logger: pino({ level: process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent' }),
        retry: fastRetry,
        sweepMs: 200,
        stopTimeoutMs: 2_000,
        ...overrides,
      });
      await worker.start();
      workers.push(worker);
      return worker;
    },
    requestsMentioning: (text) =>
      simulator.requests.filter((request) => JSON.stringify(request.body).includes(text)),
    turnsDone(tabId, count, timeoutMs = 20_000) {
      const done = () => (events.get(tabId) ?? []).filter((event) => event.event === 'turn-done');
      return new Promise((resolve, reject) => {
        const check = () => {
          const list = done();
          if (list.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(list);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`tab ${tabId}: ${done().length} of ${count} turns done in time`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async awaitTurnEnd(tabId, reason) {
      const [done] = await harness.turnsDone(tabId, 1);
      expect(done?.event === 'turn-done' && done.data.reason).toBe(reason);
      return store.readAll(tabId);
    },
    onClose(cleanup) {
      cleanups.push(cleanup);
    },
    async close() {
      for (const cleanup of cleanups.splice(0)) cleanup();
      await Promise.allSettled(workers.map((worker) => worker.stop()));
      await subscription.stop();
      await simulator.close();
      await theBus.close();
      await store.close();
      await database.drop();
    },
  };
  return harness;
}

/**
 * One harness for the calling suite: created before its tests (then `prepare`d, say with a
 * worker started), closed after them. The function returned gives a test the harness, or skips
 * the test when the servers the harness needs are unreachable.
 */
export function useHarness(
  bus: 'nats' | 'memory' = 'nats',
  prepare?: (harness: Harness) => Promise<unknown>,
): (context: TestContext) => Harness {
  let harness: Harness | null = null;
  beforeAll(async () => {
    harness = await createHarness(bus);
    if (harness) await prepare?.(harness);
  });
  afterAll(async () => {
    await harness?.close();
  });
  return (context) => harness ?? context.skip('Postgres or NATS is unreachable');
}

/** A harness with one worker started on it, for the calling suite. */
export const useHarnessWithWorker = (bus: 'nats' | 'memory' = 'nats') =>
  useHarness(bus, (harness) => harness.startWorker());

/** The user chunk that opens turn `turnId`, as a worker that took the turn stores it. */
export function openingChunk(tabId: string, turnId: string, text: string): NewChunk {
  return { ...userTextChunk({ id: randomUUID(), turnId, step: 0 }, text), tabId };
}

/** The log's seqs are 1..n with no gap, and no chunk id appears twice. */
export function assertGapFree(log: readonly Chunk[]): void {
  log.forEach((chunk, index) => {
    if (chunk.seq !== index + 1) throw new Error(`seq gap at ${index}: ${chunk.seq}`);
  });
  if (new Set(log.map((chunk) => chunk.id)).size !== log.length) {
    throw new Error('duplicate chunk id in the log');
  }
}

const repositoryRoot = fileURLToPath(new URL('../../../..', import.meta.url));

/**
 * The real worker entry (`npm run start:worker`) as a child process on the harness's database,
 * NATS prefix and simulator; resolves with the first output line matching `ready`. The harness
 * kills it on close if it still runs.
 */
export function startWorkerProcess(
  h: Harness,
  environment: Record<string, string>,
  ready: RegExp,
): Promise<{ worker: ChildProcess; readyLine: string }> {
  const worker = spawn(process.execPath, ['--import', 'tsx', 'services/agent-worker/src/main.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      NATS_URL: h.natsUrl!,
      NATS_SUBJECT_PREFIX: h.subjectPrefix!,
      SIMULATOR_URL: h.simulator.url,
      LOG_LEVEL: 'info',
      ...environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  h.onClose(() => {
    if (worker.exitCode === null) worker.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`worker process not ready:\n${output}`)),
      90_000,
    );
    const read = (data: Buffer) => {
      output += data.toString();
      const line = output.split('\n').find((candidate) => ready.test(candidate));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve({ worker, readyLine: line });
      }
    };
    // Log lines go to stdout, start-up failures to stderr.
    worker.stdout!.on('data', read);
    worker.stderr!.on('data', read);
    worker.once('exit', (code) =>
      reject(new Error(`worker process exited with ${code}:\n${output}`)),
    );
  });
}
