import { randomUUID } from 'node:crypto';
import type { LiveEvent, TabConfig } from '@chunklog/chunk-core';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertGapFree, createHarness, type Harness, openingChunk } from '../testing/harness';
import { parseExposition } from '../testing/parse-exposition';
import { createWorkerMetrics, type WorkerMetrics } from './worker-metrics';

/** Long enough to be cacheable (the simulator's minimum is 1024 tokens): cache figures move. */
const longSystem = `You are a careful assistant. ${'Always check arithmetic with the calculator tool. '.repeat(160)}`;

let harness: Harness | null;
let metrics: WorkerMetrics;
beforeAll(async () => {
  harness = await createHarness('nats');
  metrics = createWorkerMetrics(new Registry());
  await harness?.startWorker({ metrics });
});
afterAll(async () => {
  await harness?.close();
});

async function scrape(): Promise<Map<string, number>> {
  return parseExposition(await metrics.registry.metrics());
}

/** What changed between two scrapes (series absent before count from zero). */
function changes(before: Map<string, number>, after: Map<string, number>) {
  return (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
}

/** Runs one turn on a new tab; `delta` says what each series gained meanwhile. */
async function measureTurn(h: Harness, text: string, config?: TabConfig) {
  const before = await scrape();
  const tab = await h.newTab(config);
  await h.send(tab.id, text);
  await h.turnsDone(tab.id, 1);
  const after = await scrape();
  return { tab, after, delta: changes(before, after) };
}

function turnDone(events: LiveEvent[] | undefined) {
  const done = events?.find((event) => event.event === 'turn-done');
  if (done?.event !== 'turn-done') throw new Error('no turn-done');
  return done.data;
}

describe('worker metrics', () => {
  it('count every append, tool call, model step, token and turn of a multi-step tool turn', async (context) => {
    if (!harness) return context.skip();
    const { tab, delta } = await measureTurn(
      harness,
      'Add it up. [[sim: tool calculator {"expression":"6*7"}]] [[sim: steps 2]]',
      { system: longSystem },
    );

    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    const toolCalls = log.filter((chunk) => chunk.type === 'tool_call').length;
    const steps = new Set(log.filter((chunk) => chunk.role === 'assistant').map((c) => c.step));
    expect(toolCalls).toBe(2);
    expect(steps.size).toBe(3);

    // Each chunk of this turn seals on its own, so one append per chunk in the log.
    expect(delta('chunklog_worker_append_seconds_count')).toBe(log.length);
    expect(delta('chunklog_worker_append_seconds_bucket{le="+Inf"}')).toBe(log.length);
    expect(delta('chunklog_worker_append_seconds_sum')).toBeGreaterThan(0);
    expect(delta('chunklog_worker_chunks_appended_total')).toBe(log.length);

    const usage = turnDone(harness.events.get(tab.id));
    // The cached prefix covers the whole prompt here, so uncached input may well be 0.
    expect(usage.usage.outputTokens).toBeGreaterThan(0);
    expect(usage.usage.cacheCreationInputTokens).toBeGreaterThan(0);
    expect(usage.usage.cacheReadInputTokens).toBeGreaterThan(0);
    expect(delta('chunklog_worker_tokens_total{kind="input"}')).toBe(usage.usage.inputTokens);
    expect(delta('chunklog_worker_tokens_total{kind="output"}')).toBe(usage.usage.outputTokens);
    expect(delta('chunklog_worker_tokens_total{kind="cache_read"}')).toBe(
      usage.usage.cacheReadInputTokens,
    );
    expect(delta('chunklog_worker_tokens_total{kind="cache_write"}')).toBe(
      usage.usage.cacheCreationInputTokens,
    );

    expect(delta('chunklog_worker_tool_seconds_count{tool="calculator",outcome="ok"}')).toBe(
      toolCalls,
    );
    expect(delta('chunklog_worker_model_step_seconds_count{outcome="finished"}')).toBe(steps.size);
    expect(delta('chunklog_worker_model_first_event_seconds_count')).toBe(steps.size);
    expect(delta('chunklog_worker_model_retries_total{status="529"}')).toBe(0);
    expect(delta('chunklog_worker_turns_total{reason="completed"}')).toBe(1);
    expect(delta('chunklog_worker_turns_total{reason="error"}')).toBe(0);
    expect(delta('chunklog_worker_takeovers_total')).toBe(0);
    expect((await scrape()).get('chunklog_worker_running_turns')).toBe(0);
  });

  it('count a retried model call by status and a failed attempt by outcome', async (context) => {
    if (!harness) return context.skip();
    const { delta } = await measureTurn(
      harness,
      'overloaded [[sim: error 529 times=1]] [[sim: text "made it"]]',
    );
    expect(delta('chunklog_worker_model_retries_total{status="529"}')).toBe(1);
    expect(delta('chunklog_worker_model_step_seconds_count{outcome="failed"}')).toBe(1);
    expect(delta('chunklog_worker_model_step_seconds_count{outcome="finished"}')).toBe(1);
    expect(delta('chunklog_worker_turns_total{reason="completed"}')).toBe(1);
  });

  it('label a tool the registry does not know as unknown, with outcome error', async (context) => {
    if (!harness) return context.skip();
    const { after, delta } = await measureTurn(
      harness,
      'call it [[sim: tool made_up_tool {"x":1}]]',
    );
    expect(delta('chunklog_worker_tool_seconds_count{tool="unknown",outcome="error"}')).toBe(1);
    expect([...after.keys()].some((key) => key.includes('made_up_tool'))).toBe(false);
  });

  it('count a lease taken over from a worker that died mid-turn', async (context) => {
    if (!harness) return context.skip();
    const before = await scrape();
    const tab = await harness.newTab();
    // A worker that took the tab, wrote the user chunk and a tool call, and died: its short
    // lease lapses and this worker's sweep takes the tab over.
    const turnId = randomUUID();
    const lease = await harness.store.acquireLease(tab.id, { owner: 'gone', turnId, leaseMs: 200 });
    expect(lease.acquired).toBe(true);
    await harness.store.append(
      tab.id,
      [
        openingChunk(tab.id, turnId, 'orphaned [[sim: text "back"]]'),
        {
          id: randomUUID(),
          tabId: tab.id,
          turnId,
          step: 0,
          role: 'assistant',
          type: 'tool_call',
          data: { callId: 'toolu_orphan', name: 'calculator', arguments: { expression: '1+1' } },
        },
      ],
      { expectedSeq: 1 },
    );
    await harness.turnsDone(tab.id, 1);
    const delta = changes(before, await scrape());
    expect(delta('chunklog_worker_takeovers_total')).toBe(1);
    // The repair (an error result and a system notice) is appended in one call.
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(delta('chunklog_worker_chunks_appended_total')).toBe(log.length - 2);
    expect((await scrape()).get('chunklog_worker_running_turns')).toBe(0);
  });
});
