/**
 * Turn figures against the Anthropic simulator. `BENCH_TURN_SECTIONS` (comma-separated:
 * `step_cache`, `depth`, `long_tab`) runs only those sections; unset, all of them.
 *
 * Prompt-cache efficiency of a 20-step tool-using turn:
 * - turn.cache_read_share: the worker's real turn (in-process bus, a throwaway Postgres
 *   database, the simulator through the SDK); of the prompt tokens of steps 2..20, the share
 *   read from cache. Each step's request extends the previous one byte for byte, so the goal
 *   is >= 0.9.
 * - turn.cache_read_share.naive: the same conversation (same calls, same results), sent the
 *   usual way: the turn as one growing assistant message holding every tool call so far,
 *   re-bucketed each step into [assistant: all calls][user: all results]. The assistant
 *   message changes every step, so the cache only ever covers tools, system and the first
 *   user message.
 * Both runs use the same breakpoint strategy (tools, system, last two user messages) and a
 * system prompt large enough to be cacheable.
 */
import { randomUUID } from 'node:crypto';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import Anthropic from '@anthropic-ai/sdk';
import {
  buildStepRequest,
  builtinTools,
  createWorker,
  defineTool,
  type ToolDefinition,
} from '@chunklog/agent-worker';
import { createSimulator, sharedPromptTokens } from '@chunklog/anthropic-sim';
import { createMemoryBus } from '@chunklog/bus';
import {
  type Chunk,
  COMPACTION_BETA,
  compactionDataFromResponse,
  INTAKE_QUEUE,
  type MessageCommand,
  type NewChunk,
  tabEventsSubject,
  userTextChunk,
} from '@chunklog/chunk-core';
import { createPostgresStore } from '@chunklog/store';
import { createTestDatabase, testPostgresUrl } from '@chunklog/test-infra';
import pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';

const steps = 20;
const system = `You are the benchmark agent. ${'Check every figure twice with the lookup tool before answering. '.repeat(150)}`;

/** A tool whose answers are as long as real tool output (a file excerpt, a search page). */
const lookupTool = defineTool({
  name: 'lookup',
  description: 'Looks a topic up in the reference notes and returns the matching passage.',
  inputSchema: z.object({ topic: z.string() }),
  async run({ topic }) {
    return `Notes on ${topic}: ${'Each entry lists the figure, its source and the date it was checked. '.repeat(25)}`;
  },
}) as ToolDefinition<unknown>;

type UsageLike = {
  input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
};

/** Of the prompt tokens of the given usages, the share read from cache. */
function cacheReadShare(usages: readonly UsageLike[]): number {
  let read = 0;
  let total = 0;
  for (const usage of usages) {
    const cached = usage.cache_read_input_tokens ?? 0;
    read += cached;
    total += cached + (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
  }
  return total === 0 ? 0 : read / total;
}

/** A throwaway Postgres database and its store, an in-process bus and a simulator. */
async function benchBackend(
  options: { contextWindowTokens?: number; clock?: { now(): number } } = {},
) {
  const postgresUrl = await testPostgresUrl();
  if (!postgresUrl) throw new Error('turn.bench needs the local Postgres (127.0.0.1:5432)');
  const database = await createTestDatabase(postgresUrl);
  const store = createPostgresStore({ url: database.url });
  const bus = createMemoryBus();
  const simulator = await createSimulator({ logger: () => {}, ...options });
  return { database, store, bus, simulator };
}

/** An in-process worker on the bench backend, talking to its simulator through the SDK. */
function benchWorker(
  backend: Pick<Awaited<ReturnType<typeof benchBackend>>, 'store' | 'bus' | 'simulator'>,
  options: Omit<
    Parameters<typeof createWorker>[0],
    'store' | 'bus' | 'anthropic' | 'logger' | 'model'
  >,
) {
  return createWorker({
    store: backend.store,
    bus: backend.bus,
    anthropic: new Anthropic({ apiKey: 'bench', baseURL: backend.simulator.url, maxRetries: 0 }),
    model: 'claude-sonnet-4-6',
    logger: pino({ level: 'warn' }),
    ...options,
  });
}

async function chunkLogTurn(): Promise<{ share: number; log: Chunk[]; tools: Anthropic.Tool[] }> {
  const backend = await benchBackend();
  const { database, store, bus, simulator } = backend;
  const worker = benchWorker(backend, {
    workerId: 'bench-worker',
    leaseMs: 10_000,
    maxSteps: steps + 5,
    tools: [...builtinTools(), lookupTool],
  });
  try {
    await store.migrate();
    await worker.start();
    const tenant = await store.createTenant({ name: 'bench' });
    const tab = await store.createTab({ tenantId: tenant.id, config: { system } });
    const finished = new Promise<unknown>((resolve) => {
      void bus.subscribe(tabEventsSubject(tab.id), (payload, subject) => {
        if (subject.endsWith('.turn-done')) resolve(payload);
      });
    });
    const chunkId = randomUUID();
    const command: MessageCommand = {
      tabId: tab.id,
      chunkId,
      text: `Collect the figures. [[sim: tool lookup {"topic":"revenue"}]] [[sim: steps ${steps - 1}]]`,
      mode: 'interrupt',
      acceptedAt: Date.now(),
    };
    await bus.enqueue(INTAKE_QUEUE, command, { msgId: chunkId });
    const done = (await finished) as { reason?: string };
    if (done.reason !== 'completed') {
      throw new Error(`the benchmark turn did not complete: ${JSON.stringify(done)}`);
    }
    const requests = simulator.requests.filter((request) => request.path === '/v1/messages');
    if (requests.length !== steps)
      throw new Error(`expected ${steps} requests, got ${requests.length}`);
    const log = await store.readAll(tab.id);
    const tools = ((requests[0]!.body as { tools: Anthropic.Tool[] }).tools ?? []).map(
      ({ cache_control: _marker, ...tool }) => tool,
    );
    return {
      share: cacheReadShare(requests.slice(1).map((request) => request.usage ?? {})),
      log,
      tools,
    };
  } finally {
    await worker.stop();
    await simulator.close();
    await bus.close();
    await store.close();
    await database.drop();
  }
}

/** The usual request shape for step k: all calls so far in one assistant message, all results after. */
function naiveRequest(log: readonly Chunk[], step: number, tools: Anthropic.Tool[]) {
  const before = log.filter((chunk) => chunk.role === 'user' || chunk.step < step);
  // Reuse the real builder for caching and the user text, then re-bucket the turn that way.
  const reference = buildStepRequest({
    log: before.filter((chunk) => chunk.role === 'user'),
    config: { system },
    defaults: { model: 'claude-sonnet-4-6', maxTokens: 1024 },
    tools,
  });
  const calls = before.filter((chunk) => chunk.type === 'tool_call');
  const results = before.filter((chunk) => chunk.type === 'tool_result');
  const messages: Anthropic.MessageParam[] = [...reference.messages];
  if (calls.length > 0) {
    messages.push({
      role: 'assistant',
      content: calls.map((chunk) =>
        chunk.type === 'tool_call'
          ? {
              type: 'tool_use',
              id: chunk.data.callId,
              name: chunk.data.name,
              input: chunk.data.arguments,
            }
          : { type: 'text', text: '' },
      ),
    });
    messages.push({
      role: 'user',
      content: results.map((chunk, index) => ({
        type: 'tool_result',
        tool_use_id: chunk.type === 'tool_result' ? chunk.data.callId : '',
        content: chunk.type === 'tool_result' ? JSON.stringify(chunk.data.result) : '',
        // The same rolling breakpoint as the real builder: the last block of the last user message.
        ...(index === results.length - 1 ? { cache_control: { type: 'ephemeral' as const } } : {}),
      })),
    });
  }
  return { ...reference, messages };
}

async function naiveTurn(log: readonly Chunk[], tools: Anthropic.Tool[]): Promise<number> {
  const simulator = await createSimulator({ logger: () => {} });
  try {
    const anthropic = new Anthropic({ apiKey: 'bench', baseURL: simulator.url, maxRetries: 0 });
    const usages: UsageLike[] = [];
    for (let step = 0; step < steps; step++) {
      const message = await anthropic.messages.create(naiveRequest(log, step, tools));
      if (step > 0) usages.push(message.usage);
    }
    return cacheReadShare(usages);
  } finally {
    await simulator.close();
  }
}

/** Epoch milliseconds with `performance.now()`'s resolution. */
function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A full garbage collection, through V8's `gc` made available at run time. */
function garbageCollector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** How many chunks the deep tab holds below its latest compaction. */
const deepChunks = 1_000_000;

/**
 * Turn start-up and worker memory by tab depth: a tab of `deepChunks` chunks summarized by a
 * compaction near its end against a tab of 10 chunks, same run, same worker (in-process).
 * - turn.start_ms.deep_over_shallow: message enqueued → first model request at the simulator,
 *   both read from `performance.now()` (the simulator's clock is made of it), to a fraction of
 *   a millisecond.
 * - worker.heap_growth_mb.deep_tab / shallow_tab: how much the heap grew from the enqueue
 *   (after a full collection) to that request: what the worker holds for the tab's turn. Read
 *   per turn, not as the process's size, so a worker that loaded the whole deep tab would show
 *   it in the deep figure alone.
 * The deep tab is seeded with one INSERT … generate_series, then the compaction and its tail
 * through the store.
 */
async function depthStartup(): Promise<Record<string, number>> {
  const backend = await benchBackend({ clock: { now: preciseNow } });
  const { database, store, bus, simulator } = backend;
  const collectGarbage = garbageCollector();
  const anthropic = new Anthropic({ apiKey: 'bench', baseURL: simulator.url, maxRetries: 0 });
  const worker = benchWorker(backend, {
    workerId: 'bench-depth-worker',
    leaseMs: 30_000,
    maxSteps: 5,
  });
  const sql = new pg.Client({ connectionString: database.url });
  try {
    await store.migrate();
    await sql.connect();
    const tenant = await store.createTenant({ name: 'bench' });
    // A block the simulator signed, to stand for the summary of the deep history.
    const answer = await anthropic.beta.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 512,
      messages: [{ role: 'user', content: 'A long history about the weather in many cities.' }],
      compaction: { type: 'summarize' },
      betas: [COMPACTION_BETA],
    });
    const data = compactionDataFromResponse(answer, deepChunks);
    if (data === undefined) throw new Error('the simulator answered no compaction block');

    const seed = async (chunks: number, compacted: boolean) => {
      const tab = await store.createTab({ tenantId: tenant.id });
      if (compacted) {
        await sql.query(
          `INSERT INTO chunks (id, tab_id, seq, turn_id, step, role, type, data)
           SELECT gen_random_uuid(), $1::uuid, g, md5($1::text || ((g + 1) / 2)::text)::uuid, 0,
                  CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, 'text',
                  jsonb_build_object('text', 'Message ' || g || ' about the weather.')
           FROM generate_series(1, $2::bigint) g`,
          [tab.id, chunks],
        );
        await sql.query('ANALYZE chunks');
        await store.append(tab.id, [
          {
            id: randomUUID(),
            tabId: tab.id,
            turnId: randomUUID(),
            step: 0,
            role: 'assistant',
            type: 'compaction',
            data,
          },
        ]);
      }
      for (let index = 0; index < (compacted ? 4 : 5); index += 1) {
        const place = { tabId: tab.id, turnId: randomUUID(), step: 0 };
        const question = userTextChunk({ ...place, id: randomUUID() }, `Question ${index}?`);
        const answer = { ...question, id: randomUUID(), role: 'assistant' as const };
        await store.append(tab.id, [
          { ...question, tabId: tab.id },
          { ...answer, tabId: tab.id, data: { text: `Answer ${index}.` } },
        ] as NewChunk[]);
      }
      return tab.id;
    };
    const shallow = await seed(0, false);
    const deep = await seed(deepChunks, true);
    await worker.start();

    /** Enqueues a message; resolves with ms to the first model request and the heap grown by then. */
    const startup = async (tabId: string, text: string) => {
      const marker = randomUUID();
      const finished = new Promise<void>((resolve) => {
        void bus.subscribe(tabEventsSubject(tabId), (_payload, subject) => {
          if (subject.endsWith('.turn-done')) resolve();
        });
      });
      const chunkId = randomUUID();
      collectGarbage();
      const heapBefore = process.memoryUsage().heapUsed;
      const acceptedAt = Date.now();
      const enqueuedAt = preciseNow();
      await bus.enqueue(
        INTAKE_QUEUE,
        {
          tabId,
          chunkId,
          text: `${text} ${marker} [[sim: words 200]] [[sim: rate 400]]`,
          mode: 'interrupt',
          acceptedAt,
        } satisfies MessageCommand,
        { msgId: chunkId },
      );
      for (;;) {
        const request = simulator.requests.find((candidate) =>
          JSON.stringify(candidate.body).includes(marker),
        );
        if (request !== undefined) {
          const heapGrowth = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
          await finished;
          return { ms: request.receivedAt - enqueuedAt, heapGrowth };
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    };
    // Warm up (connections, code paths), then alternate and take medians.
    await startup(shallow, 'Warm up.');
    const shallowRuns: { ms: number; heapGrowth: number }[] = [];
    const deepRuns: { ms: number; heapGrowth: number }[] = [];
    for (let round = 0; round < 5; round += 1) {
      shallowRuns.push(await startup(shallow, `Round ${round}.`));
      deepRuns.push(await startup(deep, `Round ${round}.`));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const shallowMs = median(shallowRuns.map((run) => run.ms));
    const deepMs = median(deepRuns.map((run) => run.ms));
    return {
      'turn.start_ms.shallow_tab': shallowMs,
      'turn.start_ms.deep_tab': deepMs,
      'turn.start_ms.deep_over_shallow': deepMs / shallowMs,
      'worker.heap_growth_mb.shallow_tab': median(shallowRuns.map((run) => run.heapGrowth)),
      'worker.heap_growth_mb.deep_tab': median(deepRuns.map((run) => run.heapGrowth)),
    };
  } finally {
    await worker.stop();
    await sql.end();
    await simulator.close();
    await bus.close();
    await store.close();
    await database.drop();
  }
}

/** The long tab's turns, its context window and when the worker compacts. */
const longTab = { turns: 200, contextWindowTokens: 5_000, threshold: 0.7 };

/**
 * A tab that outlives its context window: `longTab.turns` one-step turns through the worker
 * (in-process bus, a throwaway Postgres database, the simulator with a small window through the
 * SDK), compacting whenever a step would pass the threshold. Over every request of the tab,
 * compaction requests included:
 * - turn.cache_read_share.long_tab: the share of prompt tokens read from cache;
 * - turn.cache_read_share_of_ideal.long_tab: the tokens read from cache over the most any cache
 *   could have read (each request's tokens that the tab's previous request already sent in the
 *   same place). Goal >= 0.95: only a compaction, which replaces the messages, costs a miss.
 */
async function longTabCache(): Promise<Record<string, number>> {
  const backend = await benchBackend({ contextWindowTokens: longTab.contextWindowTokens });
  const { database, store, bus, simulator } = backend;
  const worker = benchWorker(backend, {
    workerId: 'bench-long-tab-worker',
    leaseMs: 10_000,
    maxSteps: 5,
    contextWindowTokens: longTab.contextWindowTokens,
    compactionThreshold: longTab.threshold,
  });
  try {
    await store.migrate();
    await worker.start();
    const tenant = await store.createTenant({ name: 'bench' });
    // Above the 1,024-token cache minimum, as real agents' prompts are, well within the window.
    const tab = await store.createTab({
      tenantId: tenant.id,
      config: {
        system: `You answer about the weather. ${'Be precise, brief and kind. '.repeat(180)}`,
      },
    });
    let done = 0;
    const failed: string[] = [];
    let wake = () => {};
    await bus.subscribe(tabEventsSubject(tab.id), (payload, subject) => {
      if (!subject.endsWith('.turn-done')) return;
      const reason = (payload as { reason?: string }).reason;
      if (reason !== 'completed') failed.push(String(reason));
      done += 1;
      wake();
    });
    for (let turn = 0; turn < longTab.turns; turn += 1) {
      const chunkId = randomUUID();
      const turnDone = new Promise<void>((resolve) => {
        wake = () => {
          if (done > turn) resolve();
        };
      });
      await bus.enqueue(
        INTAKE_QUEUE,
        {
          tabId: tab.id,
          chunkId,
          text: `Turn ${turn}: how is the weather in city ${turn}? [[sim: words 40]]`,
          mode: 'interrupt',
          acceptedAt: Date.now(),
        } satisfies MessageCommand,
        { msgId: chunkId },
      );
      await turnDone;
    }
    if (failed.length > 0) throw new Error(`long-tab turns did not complete: ${failed.join(', ')}`);
    const requests = simulator.requests.filter((request) => request.path === '/v1/messages');
    const refused = requests.filter((request) => request.status !== 200);
    if (refused.length > 0) throw new Error(`${refused.length} long-tab requests were refused`);
    const compactions = (await store.readAll(tab.id)).filter(
      (chunk) => chunk.type === 'compaction',
    ).length;
    if (compactions < 3) throw new Error(`the long tab compacted only ${compactions} times`);
    let ideal = 0;
    let previous: unknown;
    for (const request of requests) {
      ideal += sharedPromptTokens(previous, request.body);
      previous = request.body;
    }
    const read = requests.reduce(
      (sum, request) => sum + (request.usage?.cache_read_input_tokens ?? 0),
      0,
    );
    return {
      'turn.cache_read_share.long_tab': cacheReadShare(
        requests.map((request) => request.usage ?? {}),
      ),
      'turn.cache_read_share_of_ideal.long_tab': ideal === 0 ? 0 : read / ideal,
      'turn.compactions.long_tab': compactions,
    };
  } finally {
    await worker.stop();
    await simulator.close();
    await bus.close();
    await store.close();
    await database.drop();
  }
}

export default async function turnBench(): Promise<Record<string, number>> {
  const only = process.env.BENCH_TURN_SECTIONS?.split(',').map((name) => name.trim());
  const runs = (section: string) => only === undefined || only.includes(section);
  const figures: Record<string, number> = {};
  if (runs('step_cache')) {
    const { share, log, tools } = await chunkLogTurn();
    figures['turn.cache_read_share'] = share;
    figures['turn.cache_read_share.naive'] = await naiveTurn(log, tools);
  }
  if (runs('depth')) Object.assign(figures, await depthStartup());
  if (runs('long_tab')) Object.assign(figures, await longTabCache());
  return figures;
}
