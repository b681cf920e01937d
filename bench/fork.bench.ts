/**
 * Forks by reference. `BENCH_FORK_SECTIONS` (comma-separated: `create`, `pages`, `cache`) runs
 * only those sections; unset, all.
 *
 * - fork.create_ms.deep_over_shallow: what POST /forks does (the window read that checks the fork
 *   point, then the fork) at the tail of a 1,000,000-chunk tab (BENCH_FORK_DEPTH) ÷ a 10-chunk
 *   tab, medians. Goal <= 1.2: constant in depth.
 * - store.page.fork_depth10_over_plain.p99: page reads (tail, and 50 chunks after random seqs) of
 *   a fork ten levels deep ÷ the same reads of a plain tab of the same length. Goal <= 1.5.
 * - fork.cache_read_share.first_request: of the prompt tokens of a fork's first request, forked at
 *   the end of a 100-step agentic turn, the share read from cache. Goal >= 0.95.
 *   fork.cache_read_share.copy: the same for a tab that holds a copy of those chunks (new ids),
 *   same run, for comparison.
 */
import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { createWorker } from '@chunklog/agent-worker';
import { createSimulator } from '@chunklog/anthropic-sim';
import { createMemoryBus } from '@chunklog/bus';
import {
  type Chunk,
  INTAKE_QUEUE,
  isForkPoint,
  type MessageCommand,
  tabEventsSubject,
} from '@chunklog/chunk-core';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import { loadDeepTab, textChunk } from '@chunklog/store/testing';
import { createTestDatabase, testPostgresUrl } from '@chunklog/test-infra';
import pg from 'pg';
import { pino } from 'pino';
import { median, percentile } from './percentile';

async function database() {
  const postgresUrl = await testPostgresUrl();
  if (!postgresUrl) throw new Error('fork.bench needs the local Postgres (127.0.0.1:5432)');
  const created = await createTestDatabase(postgresUrl);
  const store = createPostgresStore({ url: created.url, maxConnections: 2 });
  await store.migrate();
  return { created, store };
}

/** What the gateway's POST /forks does with the store (its 64-chunk window too), timed (ms). */
async function timedFork(store: ChunkStore, tenantId: string, tabId: string): Promise<number> {
  const started = performance.now();
  const tab = await store.getTab(tabId, { tenantId });
  const window = (await store.page(tabId, { before: tab.lastSeq + 2, limit: 64 })).chunks;
  if (!isForkPoint(window, tab.lastSeq)) throw new Error('the tail is no fork point');
  await store.forkTab({ tenantId, parentTabId: tabId, atSeq: tab.lastSeq });
  return performance.now() - started;
}

async function createSection(): Promise<Record<string, number>> {
  const depth = Number(process.env.BENCH_FORK_DEPTH ?? 1_000_000);
  const { created, store } = await database();
  const admin = new pg.Pool({ connectionString: created.url, max: 1 });
  try {
    const tenantId = (await store.createTenant({ name: 'bench' })).id;
    const shallow = await store.createTab({ tenantId });
    for (let at = 0; at < 10; at++)
      await store.append(shallow.id, [textChunk(shallow.id, `s ${at}`)]);
    const deep = await store.createTab({ tenantId });
    await loadDeepTab(admin, { tabId: deep.id, depth, textSql: "'chunk ' || s" });
    const samples = { shallow: [] as number[], deep: [] as number[] };
    for (let round = 0; round < 31; round++) {
      const shallowMs = await timedFork(store, tenantId, shallow.id);
      const deepMs = await timedFork(store, tenantId, deep.id);
      if (round === 0) continue;
      samples.shallow.push(shallowMs);
      samples.deep.push(deepMs);
    }
    return {
      'fork.create_ms.shallow': median(samples.shallow),
      'fork.create_ms.deep': median(samples.deep),
      'fork.create_ms.deep_over_shallow': median(samples.deep) / median(samples.shallow),
    };
  } finally {
    await admin.end();
    await store.close();
    await created.drop();
  }
}

async function pagesSection(): Promise<Record<string, number>> {
  const { created, store } = await database();
  try {
    const tenantId = (await store.createTenant({ name: 'bench' })).id;
    // A chain of forks ten levels deep, 300 chunks a level, and a plain tab of the same length.
    let fork = await store.createTab({ tenantId });
    for (let level = 0; level <= 10; level++) {
      for (let at = 0; at < 30; at++) {
        await store.append(
          fork.id,
          Array.from({ length: 10 }, (_, n) => textChunk(fork.id, `level ${level} ${at} ${n}`)),
        );
      }
      if (level < 10) {
        const { lastSeq } = await store.getTab(fork.id);
        fork = await store.forkTab({ tenantId, parentTabId: fork.id, atSeq: lastSeq });
      }
    }
    const length = (await store.getTab(fork.id)).lastSeq;
    const plain = await store.createTab({ tenantId });
    for (let at = 0; at < length; at += 10) {
      await store.append(
        plain.id,
        Array.from({ length: 10 }, (_, n) => textChunk(plain.id, `plain ${at + n}`)),
      );
    }
    const timings = { fork: [] as number[], plain: [] as number[] };
    for (let round = 0; round < 400; round++) {
      const after = Math.floor(Math.random() * (length - 50));
      for (const [kind, tabId] of [
        ['fork', fork.id],
        ['plain', plain.id],
      ] as const) {
        const started = performance.now();
        await store.page(tabId, round % 2 === 0 ? { limit: 50 } : { after, limit: 50 });
        timings[kind].push(performance.now() - started);
      }
    }
    const p99 = (values: number[]) =>
      percentile(
        [...values].sort((a, b) => a - b),
        0.99,
      );
    return {
      'store.page.fork_depth10.p99_ms': p99(timings.fork),
      'store.page.plain_same_length.p99_ms': p99(timings.plain),
      'store.page.fork_depth10_over_plain.p99': p99(timings.fork) / p99(timings.plain),
    };
  } finally {
    await store.close();
    await created.drop();
  }
}

async function cacheSection(): Promise<Record<string, number>> {
  const { created, store } = await database();
  const bus = createMemoryBus();
  const simulator = await createSimulator({ logger: () => {} });
  const worker = createWorker({
    store,
    bus,
    anthropic: new Anthropic({ apiKey: 'bench', baseURL: simulator.url, maxRetries: 0 }),
    workerId: 'bench-fork',
    leaseMs: 10_000,
    maxSteps: 110,
    model: 'claude-sonnet-4-6',
    logger: pino({ level: 'warn' }),
  });
  const system = `You keep the ledger. ${'Check every figure against the ledger before you answer. '.repeat(150)}`;
  const turn = async (tabId: string, text: string) => {
    const done = new Promise<void>((resolve) => {
      void bus.subscribe(tabEventsSubject(tabId), (_payload, subject) => {
        if (subject.endsWith('.turn-done')) resolve();
      });
    });
    const chunkId = randomUUID();
    const command: MessageCommand = {
      tabId,
      chunkId,
      text,
      mode: 'enqueue',
      acceptedAt: Date.now(),
    };
    await bus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId });
    await done;
  };
  const shareOfNext = async (tabId: string) => {
    const before = simulator.requests.length;
    await turn(tabId, 'And the total? [[sim: words 5]]');
    const usage = (simulator.requests[before]?.usage ?? {}) as {
      input_tokens?: number | null;
      cache_read_input_tokens?: number | null;
      cache_creation_input_tokens?: number | null;
    };
    const read = usage.cache_read_input_tokens ?? 0;
    return read / (read + (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0));
  };
  try {
    await worker.start();
    const tenantId = (await store.createTenant({ name: 'bench' })).id;
    const parent = await store.createTab({ tenantId, config: { system } });
    await turn(
      parent.id,
      'Add them up [[sim: tool calculator {"expression":"1+1"}]] [[sim: steps 100]]',
    );
    const log: Chunk[] = await store.readAll(parent.id);
    const { lastSeq } = await store.getTab(parent.id);
    const fork = await store.forkTab({ tenantId, parentTabId: parent.id, atSeq: lastSeq });
    const forkShare = await shareOfNext(fork.id);
    // The same chunks copied into a tab of their own (new ids, the same bodies).
    const copy = await store.createTab({ tenantId, config: { system } });
    for (const chunk of log) {
      const { seq: _seq, createdAt: _createdAt, ...body } = chunk;
      await store.append(copy.id, [{ ...body, id: randomUUID(), tabId: copy.id }]);
    }
    const copyShare = await shareOfNext(copy.id);
    return {
      'fork.turn_chunks': log.length,
      'fork.cache_read_share.first_request': forkShare,
      'fork.cache_read_share.copy': copyShare,
    };
  } finally {
    await worker.stop();
    await simulator.close();
    await bus.close();
    await store.close();
    await created.drop();
  }
}

export default async function forkBench(): Promise<Record<string, number>> {
  const sections = (process.env.BENCH_FORK_SECTIONS ?? 'create,pages,cache').split(',');
  return {
    ...(sections.includes('cache') ? await cacheSection() : {}),
    ...(sections.includes('pages') ? await pagesSection() : {}),
    ...(sections.includes('create') ? await createSection() : {}),
  };
}
