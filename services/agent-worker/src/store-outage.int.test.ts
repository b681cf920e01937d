/**
 * Postgres outages, on a cluster of this file's own that the tests stop (`pg_ctl stop -m
 * immediate`) and start again: a turn cut by the outage ends visibly once the store is back,
 * whoever holds it (through a seal, an interrupt, a tool call or a takeover); messages accepted
 * before the outage are each stored exactly once however long it lasts; the log stays gap-free
 * and every seq is sealed once.
 */
import type { Chunk, LiveEvent, Tab } from '@chunklog/chunk-core';
import {
  type PrivatePostgres,
  privatePostgresAvailable,
  sleep,
  startPrivatePostgres,
} from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertGapFree, createHarness, type Harness } from './testing/harness';
import { holdTool } from './testing/hold-tool';
import { builtinTools } from './tools/builtin-tools';
import type { Worker } from './worker';

let cluster: PrivatePostgres | null = null;
let harness: Harness | null = null;

beforeAll(async () => {
  if (!privatePostgresAvailable()) {
    console.warn(
      '\n!!! SKIPPED: store outage suites: no Postgres binaries for a private cluster\n',
    );
    return;
  }
  cluster = await startPrivatePostgres();
  harness = await createHarness('nats', { postgresUrl: cluster.url });
});
afterAll(async () => {
  // Up again (if a failed test left it down), so the harness can drop its database.
  await cluster?.start().catch(() => {});
  await harness?.close();
  await cluster?.dispose();
});

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function eventsOf(h: Harness, tabId: string, kind: LiveEvent['event']): LiveEvent[] {
  return (h.events.get(tabId) ?? []).filter((event) => event.event === kind);
}

/** Postgres down for `milliseconds`, then up again. */
async function outage(milliseconds: number): Promise<void> {
  await cluster!.stop();
  await sleep(milliseconds);
  await cluster!.start();
}

/**
 * The tab's one turn ended visibly: one turn-done, `completed` or `error` (then with an error
 * chunk or a notice in the log saying why), a gap-free log, every seq sealed exactly once.
 */
async function expectEndedVisibly(h: Harness, tabId: string): Promise<string> {
  const [done] = await h.turnsDone(tabId, 1, 60_000);
  await sleep(500);
  expect(eventsOf(h, tabId, 'turn-done')).toHaveLength(1);
  const reason = done!.event === 'turn-done' ? done!.data.reason : '';
  expect(['completed', 'error']).toContain(reason);
  const log = await expectSettled(h, tabId);
  if (reason === 'error') {
    expect(log.some((chunk) => chunk.type === 'error' || chunk.type === 'system')).toBe(true);
  }
  return reason;
}

/** The tab is idle, its log gap-free, and every seq was sealed exactly once. */
async function expectSettled(h: Harness, tabId: string): Promise<Chunk[]> {
  const log = await h.store.readAll(tabId);
  assertGapFree(log);
  const sealed = eventsOf(h, tabId, 'chunk-seal').map((event) =>
    event.event === 'chunk-seal' ? event.data.chunk.seq : -1,
  );
  expect(new Set(sealed).size).toBe(sealed.length);
  expect([...sealed].sort((a, b) => a - b)).toEqual(log.map((chunk) => chunk.seq));
  expect((await h.store.getTab(tabId)).status).toBe('idle');
  return log;
}

/** A new tab whose turn is streaming a long reply (~2.5 s of text). */
async function streamingTab(h: Harness): Promise<Tab> {
  const tab = await h.newTab();
  await h.send(tab.id, 'tell me [[sim: words 150]] [[sim: rate 60]]');
  await until(() => eventsOf(h, tab.id, 'chunk-delta').length > 5, 'the stream');
  return tab;
}

function assistantSeal(event: LiveEvent): boolean {
  return event.event === 'chunk-seal' && event.data.chunk.role === 'assistant';
}

async function stopAll(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((worker) => worker.stop()));
}

describe('store outages', () => {
  it('a turn cut by a 4 s outage mid-stream ends visibly, with one worker', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const worker = await h.startWorker();
    const tab = await streamingTab(h);
    await outage(4_000);
    await expectEndedVisibly(h, tab.id);
    await stopAll([worker]);
  });

  it('a turn cut by a 4 s outage mid-stream ends visibly, with two workers', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const workers = [await h.startWorker(), await h.startWorker()];
    const tab = await streamingTab(h);
    await outage(4_000);
    await expectEndedVisibly(h, tab.id);
    await stopAll(workers);
  });

  it('a tool result stored during an outage lands once the store is back', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const hold = holdTool();
    const worker = await h.startWorker({ tools: [...builtinTools(), hold.tool] });
    const tab = await h.newTab();
    await h.send(tab.id, 'wait [[sim: tool hold {}]]');
    await hold.running;
    await cluster!.stop();
    hold.release();
    await sleep(4_000);
    await cluster!.start();
    expect(await expectEndedVisibly(h, tab.id)).toBe('completed');
    const log = await h.store.readAll(tab.id);
    expect(log.find((chunk) => chunk.type === 'tool_result')?.data).toMatchObject({
      result: 'released',
      isError: false,
    });
    await stopAll([worker]);
  });

  it('an outage longer than the lease during a tool call: the turn still ends visibly once', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const hold = holdTool();
    const workers = [
      await h.startWorker({ tools: [...builtinTools(), hold.tool] }),
      await h.startWorker({ tools: [...builtinTools(), hold.tool] }),
    ];
    const tab = await h.newTab();
    await h.send(tab.id, 'wait [[sim: tool hold {}]]');
    await hold.running;
    // Renewals every ~0.7 s fail for 4 s: the 2 s lease lapses while the tool runs.
    await outage(4_000);
    await sleep(1_000);
    hold.release();
    await expectEndedVisibly(h, tab.id);
    await stopAll(workers);
  });

  it('a worker stopped during an outage stops at once and leaves the turn to the next one', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const first = await h.startWorker();
    const tab = await streamingTab(h);
    await cluster!.stop();
    const stopping = Date.now();
    await first.stop();
    expect(Date.now() - stopping).toBeLessThan(5_000);
    await sleep(1_000);
    await cluster!.start();
    const second = await h.startWorker();
    await expectEndedVisibly(h, tab.id);
    const log = await h.store.readAll(tab.id);
    expect(log.some((chunk) => chunk.type === 'system' && chunk.data.kind === 'takeover')).toBe(
      true,
    );
    await stopAll([second]);
  });

  it('a text block that seals during an outage is sealed once, whole, once the store is back', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const worker = await h.startWorker();
    const tab = await h.newTab();
    // Eight words at 5 tokens a second: the block seals ~1.5 s after its first delta, inside
    // the outage that starts there.
    await h.send(tab.id, 'seal [[sim: words 8]] [[sim: rate 5]]');
    await until(() => eventsOf(h, tab.id, 'chunk-delta').length > 0, 'the first delta');
    await cluster!.stop();
    // The block was still streaming when the store went down: its seal falls in the outage.
    expect(eventsOf(h, tab.id, 'chunk-seal').filter(assistantSeal)).toHaveLength(0);
    await sleep(4_000);
    await cluster!.start();
    const reason = await expectEndedVisibly(h, tab.id);
    const log = await h.store.readAll(tab.id);
    const replies = log.filter((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
    if (reason === 'completed') {
      expect(replies).toHaveLength(1);
      const streamed = eventsOf(h, tab.id, 'chunk-delta')
        .filter((event) => event.event === 'chunk-delta' && event.data.id === replies[0]!.id)
        .map((event) => (event.event === 'chunk-delta' ? event.data.text : ''))
        .join('');
      expect(streamed).toBe((replies[0]!.data as { text: string }).text);
    }
    await stopAll([worker]);
  });

  it('an interrupt that arrives while the store is down mid-turn is stored once and answered', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const worker = await h.startWorker();
    const tab = await streamingTab(h);
    // The gateway read the generation before the outage (it answers 503 during one).
    const generation = await h.store.cancelGeneration(tab.id);
    await cluster!.stop();
    const interrupt = await h.send(
      tab.id,
      'instead [[sim: text "interrupted"]]',
      'interrupt',
      generation,
    );
    await sleep(3_000);
    await cluster!.start();
    // The interrupted turn and the interrupt's own (or one turn answering both) end visibly.
    await until(
      () =>
        eventsOf(h, tab.id, 'chunk-seal').some(
          (event) =>
            event.event === 'chunk-seal' &&
            (event.data.chunk.data as { text?: string }).text === 'interrupted',
        ),
      'the answer to the interrupt',
      60_000,
    );
    await until(() => !worker.runningTabs().includes(tab.id), 'the tab let go');
    await sleep(500);
    // Every turn started ended visibly, once.
    const started = eventsOf(h, tab.id, 'turn-start').length;
    expect(started).toBeGreaterThanOrEqual(1);
    expect(eventsOf(h, tab.id, 'turn-done')).toHaveLength(started);
    const log = await expectSettled(h, tab.id);
    expect(log.filter((chunk) => chunk.id === interrupt)).toHaveLength(1);
    expect(log.findIndex((chunk) => chunk.id === interrupt)).toBeGreaterThan(0);
    await stopAll([worker]);
  });

  it('across a takeover: the holder stopped during the outage, the other worker ends the turn', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const workers = [await h.startWorker(), await h.startWorker()];
    const tab = await streamingTab(h);
    const holder = workers.find((worker) => worker.runningTabs().includes(tab.id))!;
    const other = workers.find((worker) => worker !== holder)!;
    expect(holder).toBeDefined();
    await cluster!.stop();
    await holder.stop();
    await sleep(2_000);
    await cluster!.start();
    await expectEndedVisibly(h, tab.id);
    const log = await h.store.readAll(tab.id);
    expect(log.some((chunk) => chunk.type === 'system' && chunk.data.kind === 'takeover')).toBe(
      true,
    );
    expect(other.runningTabs()).not.toContain(tab.id);
    await stopAll([other]);
  });

  it('messages accepted before a 30 s outage are each stored exactly once after it', async (context) => {
    const h = harness;
    if (!h) return context.skip();
    const tabs = [await h.newTab(), await h.newTab()];
    const sent = new Map<string, string[]>();
    for (const tab of tabs) {
      const ids: string[] = [];
      for (let index = 0; index < 3; index++) {
        ids.push(await h.send(tab.id, `message ${index} [[sim: words 3]]`, 'enqueue'));
      }
      sent.set(tab.id, ids);
    }
    await cluster!.stop();
    // The worker comes up during the outage and finds the messages waiting on the queue.
    const worker = await h.startWorker();
    await sleep(30_000);
    expect(worker.health().store).toBe('unreachable');
    await cluster!.start();
    for (const tab of tabs) {
      await h.turnsDone(tab.id, 3, 60_000);
      const log = await h.store.readAll(tab.id);
      assertGapFree(log);
      for (const chunkId of sent.get(tab.id)!) {
        expect(log.filter((chunk) => chunk.id === chunkId)).toHaveLength(1);
      }
    }
    expect(worker.health().store).toBe('reachable');
    await stopAll([worker]);
  }, 150_000);
});
