import { randomUUID } from 'node:crypto';
import { validateRequest } from '@chunklog/anthropic-sim';
import { buildRequest, type Chunk, listCacheMisses, type TabConfig } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { createWorkerMetrics, type WorkerMetrics } from '../metrics/worker-metrics';
import { assertGapFree, type Harness, startWorkerProcess, useHarness } from '../testing/harness';

/*
 * Tabs that outgrow a small context window (the simulator's `context-window` directive, in
 * every message so it holds after a compaction), driven through the worker with the real SDK.
 */
const window = 3_000;
const system = `You answer about the weather. ${'Be precise, brief and kind. '.repeat(40)}`;

function message(marker: string, turn: number, extra = ''): string {
  return `${marker} turn ${turn}: the weather in city ${turn}? [[sim: words 100]] [[sim: context-window ${window}]] ${extra}`;
}

function turnReasons(harness: Harness, tabId: string): string[] {
  return (harness.events.get(tabId) ?? []).flatMap((event) =>
    event.event === 'turn-done' ? [event.data.reason] : [],
  );
}

function compactions(log: readonly Chunk[]): Chunk[] {
  return log.filter((chunk) => chunk.type === 'compaction');
}

async function counterValue(metrics: WorkerMetrics, labels: { cause: string; outcome: string }) {
  const values = (await metrics.compactions.get()).values;
  return values
    .filter(
      (value) => value.labels.cause === labels.cause && value.labels.outcome === labels.outcome,
    )
    .reduce((sum, value) => sum + value.value, 0);
}

describe('compaction in the worker (Postgres + the in-process bus, simulator through the SDK)', () => {
  const metrics = createWorkerMetrics();
  const getHarness = useHarness('memory', (harness) =>
    harness.startWorker({ contextWindowTokens: window, compactionThreshold: 0.7, metrics }),
  );

  /** Sends `turns` messages one turn at a time; returns the tab's log. */
  async function drive(
    h: Harness,
    tabId: string,
    marker: string,
    turns: number,
    from = 0,
    extra = '',
  ): Promise<Chunk[]> {
    for (let turn = from; turn < from + turns; turn += 1) {
      await h.send(tabId, message(marker, turn, extra));
      await h.turnsDone(tabId, turn + 1, 30_000);
    }
    return h.store.readAll(tabId);
  }

  it('keeps answering for 200 turns far past the window, compacting, turn cost flat, every chunk still in the log', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab({ system });
    const marker = `long-${randomUUID()}`;
    const turns = 200;
    const log = await drive(harness, tab.id, marker, turns);

    expect(turnReasons(harness, tab.id)).toEqual(Array(turns).fill('completed'));
    assertGapFree(log);
    expect(log[0]?.seq).toBe(1);
    expect(log.filter((chunk) => chunk.role === 'user' && chunk.type === 'text')).toHaveLength(
      turns,
    );
    expect(log.filter((chunk) => chunk.role === 'assistant' && chunk.type === 'text')).toHaveLength(
      turns,
    );
    expect(compactions(log).length).toBeGreaterThanOrEqual(3);
    // Pages still return the whole history from seq 1.
    const seqs: number[] = [];
    for (let after = 0; ; ) {
      const page = await harness.store.page(tab.id, { after, limit: 100 });
      seqs.push(...page.chunks.map((chunk) => chunk.seq));
      if (!page.hasMore) break;
      after = page.chunks.at(-1)!.seq;
    }
    expect(seqs).toEqual(log.map((chunk) => chunk.seq));

    // Every request was accepted (token counts included): none passed the window, none was refused.
    expect(harness.requestsMentioning(marker).filter((request) => request.status !== 200)).toEqual(
      [],
    );
    const requests = harness
      .requestsMentioning(marker)
      .filter((request) => request.path === '/v1/messages');
    // Compaction requests went through the beta; so did every step after the first compaction.
    const firstCompaction = requests.findIndex(
      (request) => (request.body as { compaction?: unknown }).compaction !== undefined,
    );
    expect(firstCompaction).toBeGreaterThan(0);
    for (const request of requests.slice(firstCompaction)) {
      expect(String(request.headers['anthropic-beta'])).toContain('compact-2026-09-04');
    }
    // Every step asked for cache diagnostics, the first with null, each later one naming the
    // response before it.
    const steps = requests.filter(
      (request) => (request.body as { compaction?: unknown }).compaction === undefined,
    );
    expect(steps).toHaveLength(turns);
    // Turn cost is flat in history: the prompt of a step late in the tab is no larger than one
    // early on (only the tokens since the latest compaction are sent), always within the window.
    const prompt = (request: (typeof steps)[number]) =>
      (request.usage?.input_tokens ?? 0) +
      (request.usage?.cache_read_input_tokens ?? 0) +
      (request.usage?.cache_creation_input_tokens ?? 0);
    const prompts = steps.map(prompt);
    expect(Math.max(...prompts)).toBeLessThan(window);
    const early = Math.max(...prompts.slice(0, turns / 2));
    const late = Math.max(...prompts.slice(turns / 2));
    expect(late).toBeLessThanOrEqual(early * 1.1);
    expect(compactions(log).length).toBeGreaterThanOrEqual(20);
    expect(steps[0]?.body).toMatchObject({ diagnostics: { previous_message_id: null } });
    for (const request of steps.slice(1)) {
      expect(request.body).toMatchObject({
        diagnostics: { previous_message_id: expect.stringMatching(/^msg_/) },
      });
    }
    // The request a next step would send stays within the threshold's reach.
    const next = buildRequest({ chunks: log, model: 'claude-sonnet-4-6', maxTokens: 4096, system });
    expect(validateRequest(next)).toEqual([]);
    expect(JSON.stringify(next).length / 4).toBeLessThan(window);
    expect(await counterValue(metrics, { cause: 'threshold', outcome: 'compacted' })).toBe(
      compactions(log).length,
    );
    // The cache missed only where a compaction replaced the messages, and the worker counted it.
    const misses = (await metrics.cacheMisses.get()).values;
    expect(misses.map((value) => value.labels.reason)).toEqual(['messages_changed']);
    expect(misses[0]?.value).toBe(compactions(log).length);
    // Each miss is recorded on the log: on the first chunk of the step after each compaction.
    const recorded = listCacheMisses(log, log.length);
    expect(recorded.map((miss) => miss.reason)).toEqual(
      compactions(log).map(() => 'messages_changed'),
    );
    for (const miss of recorded) {
      expect(miss.missedInputTokens).toBeGreaterThan(0);
      const chunk = log.find((candidate) => candidate.seq === miss.seq)!;
      const before = log.filter(
        (candidate) => candidate.seq < miss.seq && candidate.role !== 'user',
      );
      expect(before.at(-1)?.type).toBe('compaction');
      expect(chunk).toMatchObject({ role: 'assistant', turnId: miss.turnId, step: miss.step });
    }
  }, 400_000);

  it('recovers from "prompt is too long" by compacting and sending the step again', async (context) => {
    const harness = getHarness(context);
    // The threshold is off: only the API's refusal makes the worker compact.
    const config: TabConfig = { system, compaction: { enabled: false } };
    const tab = await harness.newTab(config);
    const marker = `too-long-${randomUUID()}`;
    const before = await counterValue(metrics, { cause: 'too_long', outcome: 'compacted' });
    // Long questions, three-word answers: a prompt grows by some 300 tokens a turn, so it jumps
    // past the window (refused) rather than landing in the few tokens where a reply would be cut.
    const question = `${'Tell me everything about the sky over the harbour today. '.repeat(20)} [[sim: words 3]]`;
    const log = await drive(harness, tab.id, marker, 20, 0, question);

    expect(turnReasons(harness, tab.id)).toEqual(Array(20).fill('completed'));
    assertGapFree(log);
    const requests = harness.requestsMentioning(marker);
    const refused = requests.filter((request) => request.status === 400);
    expect(refused.length).toBeGreaterThan(0);
    expect(compactions(log).length).toBeGreaterThan(0);
    expect(log.some((chunk) => chunk.type === 'error')).toBe(false);
    expect(await counterValue(metrics, { cause: 'too_long', outcome: 'compacted' })).toBe(
      before + compactions(log).length,
    );
  }, 120_000);

  it('compacts a reply cut by the window (model_context_window_exceeded) and lets the model go on', async (context) => {
    const harness = getHarness(context);
    // Long answers: the window fills during a reply before any prompt passes it.
    const tab = await harness.newTab({ system, compaction: { enabled: false } });
    const marker = `cut-${randomUUID()}`;
    let turn = 0;
    let log: Chunk[] = [];
    const cutTurn = () =>
      log.find((chunk, index) => {
        const before = log[index - 1];
        return (
          chunk.type === 'compaction' &&
          before?.role === 'assistant' &&
          before.type === 'text' &&
          before.turnId === chunk.turnId
        );
      });
    while (cutTurn() === undefined && turn < 12) {
      await harness.send(tab.id, message(marker, turn, '[[sim: words 400]]'));
      turn += 1;
      await harness.turnsDone(tab.id, turn, 30_000);
      log = await harness.store.readAll(tab.id);
    }
    const compaction = cutTurn();
    expect(compaction).toBeDefined();
    // The cut answer stays in the log; the same turn answers again after the compaction.
    const sameTurn = log.filter((chunk) => chunk.turnId === compaction!.turnId);
    expect(sameTurn.map((chunk) => `${chunk.step}:${chunk.role}/${chunk.type}`)).toEqual([
      '0:user/text',
      '0:assistant/text',
      '0:assistant/compaction',
      '1:assistant/text',
    ]);
    expect(turnReasons(harness, tab.id).every((reason) => reason === 'completed')).toBe(true);
  }, 120_000);

  it('compacts twice in a row when one compaction leaves the request above the threshold', async (context) => {
    const harness = getHarness(context);
    // A threshold below what the summary and the system prompt take: every step compacts first.
    const tab = await harness.newTab({ system, compaction: { threshold: 0.1 } });
    const marker = `twice-${randomUUID()}`;
    const log = await drive(harness, tab.id, marker, 4);

    expect(turnReasons(harness, tab.id)).toEqual(Array(4).fill('completed'));
    const found = compactions(log);
    expect(found.length).toBeGreaterThanOrEqual(2);
    // Each later compaction summarizes through a seq above the earlier one's.
    const through = found.map((chunk) => (chunk.data as { throughSeq: number }).throughSeq);
    expect([...through].sort((a, b) => a - b)).toEqual(through);
    expect(new Set(through).size).toBe(through.length);
    expect(harness.requestsMentioning(marker).filter((request) => request.status !== 200)).toEqual(
      [],
    );
  }, 60_000);

  it('a cancel while compaction is retried stores no compaction and leaves a usable log', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab({ system, compaction: { threshold: 0.1 } });
    const marker = `cancel-${randomUUID()}`;
    await drive(harness, tab.id, marker, 1);
    // The next compaction is refused as unavailable many times: the worker keeps retrying.
    const before = (await harness.store.readAll(tab.id)).length;
    await harness.send(
      tab.id,
      message(marker, 1, '[[sim: compaction-unavailable times=100]] [[sim: words 5]]'),
    );
    const deadline = Date.now() + 10_000;
    while (
      harness.requestsMentioning(marker).filter((request) => request.status === 529).length < 1 &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await harness.cancel(tab.id);
    await harness.turnsDone(tab.id, 2, 20_000);
    expect(turnReasons(harness, tab.id)).toEqual(['completed', 'cancelled']);
    const log = await harness.store.readAll(tab.id);
    const added = log.slice(before);
    expect(added.map((chunk) => chunk.type)).not.toContain('compaction');

    // The next message answers normally.
    await harness.send(tab.id, message(marker, 2));
    await harness.turnsDone(tab.id, 3, 30_000);
    expect(turnReasons(harness, tab.id).at(-1)).toBe('completed');
  }, 60_000);
});

describe('a worker with no figures for a tab near its threshold (Postgres + the in-process bus)', () => {
  const getHarness = useHarness('memory');

  it('asks count_tokens before the first step it runs on the tab, not before later ones', async (context) => {
    const harness = getHarness(context);
    const settings = { contextWindowTokens: window, compactionThreshold: 0.7 };
    const first = await harness.startWorker(settings);
    // Some 1,500 tokens by the estimate: within a factor of two of the 2,100-token threshold.
    const tab = await harness.newTab({ system: `${system}${'Answer in one line. '.repeat(150)}` });
    const marker = `count-${randomUUID()}`;
    const counts = () =>
      harness.simulator.requests.filter(
        (request) =>
          request.path === '/v1/messages/count_tokens' &&
          JSON.stringify(request.body).includes(marker),
      );

    await harness.send(tab.id, message(marker, 0, '[[sim: words 5]]'));
    await harness.turnsDone(tab.id, 1, 20_000);
    await harness.send(tab.id, message(marker, 1, '[[sim: words 5]]'));
    await harness.turnsDone(tab.id, 2, 20_000);
    // The first step had no response to go by; the second had the first's figures.
    expect(counts()).toHaveLength(1);

    // A new worker knows nothing of the tab: it counts again.
    await first.stop();
    await harness.startWorker(settings);
    await harness.send(tab.id, message(marker, 2, '[[sim: words 5]]'));
    await harness.turnsDone(tab.id, 3, 20_000);
    expect(counts()).toHaveLength(2);
    for (const request of counts()) {
      expect(request.status).toBe(200);
      expect(request.body).not.toHaveProperty('max_tokens');
    }
    expect(turnReasons(harness, tab.id)).toEqual(['completed', 'completed', 'completed']);
    // The count is below the threshold: nothing was compacted.
    expect(compactions(await harness.store.readAll(tab.id))).toEqual([]);
  }, 60_000);
});

describe('a worker killed during a compaction (Postgres + NATS, the worker as a child process)', () => {
  const getHarness = useHarness();
  const leaseMs = 1_500;

  it('leaves no half state: the next holder redoes the compaction once, and the tab answers on', async (context) => {
    const h = getHarness(context);
    const { worker: child } = await startWorkerProcess(
      h,
      {
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: h.simulator.url,
        MODEL: 'claude-sonnet-4-6',
        LEASE_MS: String(leaseMs),
        WORKER_ID: 'compacting-child',
      },
      /agent worker ready/,
    );
    const tab = await h.newTab({ system });
    const marker = `killed-${randomUUID()}`;
    // The first three compaction requests of this conversation are answered 529 unavailable:
    // the child is killed while it waits to retry.
    await h.send(tab.id, `${marker} [[sim: compaction-unavailable times=3]] [[sim: words 20]]`);
    await h.turnsDone(tab.id, 1, 20_000);
    await h.send(tab.id, '', 'compact');
    const deadline = Date.now() + 20_000;
    while (!h.requestsMentioning(marker).some((request) => request.status === 529)) {
      if (Date.now() > deadline) throw new Error('the child never asked for a compaction');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGKILL');
    expect(compactions(await h.store.readAll(tab.id))).toEqual([]);

    await h.startWorker({ workerId: 'survivor', leaseMs });
    const waitUntil = Date.now() + 20_000;
    while (
      (await h.store.inboxList(tab.id)).length > 0 ||
      (await h.store.getTab(tab.id)).status !== 'idle'
    ) {
      if (Date.now() > waitUntil) throw new Error('the compaction was never redone');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const log = await h.store.readAll(tab.id);
    assertGapFree(log);
    expect(compactions(log)).toHaveLength(1);
    expect(log.filter((chunk) => chunk.type === 'error')).toEqual([]);

    await h.send(tab.id, `${marker} and now? [[sim: words 5]]`);
    const answered = Date.now() + 20_000;
    for (;;) {
      const texts = (await h.store.readAll(tab.id)).filter(
        (chunk) => chunk.role === 'assistant' && chunk.type === 'text',
      );
      if (texts.length === 2) break;
      if (Date.now() > answered) throw new Error('the tab did not answer after the compaction');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const last = h.requestsMentioning('and now?').at(-1)!;
    expect(last.status).toBe(200);
    expect(String(last.headers['anthropic-beta'])).toContain('compact-2026-09-04');
  }, 90_000);
});
