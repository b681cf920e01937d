import type { Simulator } from '@chunklog/anthropic-sim';
import type { Chunk } from '@chunklog/chunk-core';
import { embeddedBackend, type GatewayHarness, startGateway } from '@chunklog/gateway/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedWorker } from '../support/simulated-worker';

describe('POST /v1/tabs/:tabId/compact (embedded backend, real worker and simulator)', () => {
  let gateway: GatewayHarness;
  let simulator: Simulator;
  let running: Awaited<ReturnType<typeof startSimulatedWorker>> | undefined;

  beforeAll(async () => {
    gateway = await startGateway(embeddedBackend);
    running = await startSimulatedWorker(gateway);
    simulator = running.simulator;
  });
  afterAll(async () => {
    await running?.close();
    await gateway?.close();
  });

  async function chunks(tabId: string): Promise<Chunk[]> {
    const page = await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=500`);
    return (page.body as { chunks: Chunk[] }).chunks;
  }

  async function tabOf(tabId: string): Promise<{ status: string }> {
    const response = await gateway.request('GET', `/v1/tabs/${tabId}`);
    return (response.body as { tab: { status: string } }).tab;
  }

  /** Waits until the tab is idle and its log passes `check`. */
  async function idleWith(tabId: string, check: (log: Chunk[]) => boolean): Promise<Chunk[]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const tab = await tabOf(tabId);
      const log = await chunks(tabId);
      if (tab.status === 'idle' && check(log)) return log;
      if (Date.now() > deadline) throw new Error(`tab ${tabId} never settled: ${log.length}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async function say(tabId: string, text: string, answers: number): Promise<void> {
    const accepted = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
      body: { text },
    });
    expect(accepted.status).toBe(202);
    await idleWith(
      tabId,
      (log) =>
        log.filter((chunk) => chunk.role === 'assistant' && chunk.type === 'text').length >=
        answers,
    );
  }

  it('compacts as a turn of its own; /context then opens with the block, pages keep every chunk', async () => {
    const tabId = await gateway.createTab();
    await say(tabId, 'Tell me about rain. [[sim: words 30]]', 1);
    await say(tabId, 'And snow? [[sim: words 30]]', 2);

    const response = await gateway.request('POST', `/v1/tabs/${tabId}/compact`);
    expect(response.status).toBe(202);
    const log = await idleWith(tabId, (log) => log.some((chunk) => chunk.type === 'compaction'));
    const compaction = log.find((chunk) => chunk.type === 'compaction')!;
    expect(compaction.seq).toBe(log.length);
    // The latest answer is a step that could still be written to, so it stays after the cut.
    expect(compaction.data).toMatchObject({ throughSeq: log.length - 2 });
    expect(log.map((chunk) => chunk.seq)).toEqual(log.map((_, index) => index + 1));

    const context = await gateway.request('GET', `/v1/tabs/${tabId}/context`);
    const messages = (context.body as { request: { messages: { content: { type: string }[] }[] } })
      .request.messages;
    expect(messages[0]?.content[0]?.type).toBe('compaction');

    // The tab answers after it, through the beta endpoint.
    await say(tabId, 'And wind? [[sim: words 10]]', 3);
    const last = simulator.requests.at(-1)!;
    expect(last.status).toBe(200);
    expect(String(last.headers['anthropic-beta'])).toContain('compact-2026-09-04');

    // That answer's request missed the cache where the block replaced the messages, and says so.
    const after = await gateway.request('GET', `/v1/tabs/${tabId}/context`);
    const answer = (await chunks(tabId)).at(-1)!;
    expect(answer).toMatchObject({ role: 'assistant', type: 'text' });
    expect((after.body as { cacheMisses: unknown }).cacheMisses).toEqual([
      {
        seq: answer.seq,
        turnId: answer.turnId,
        step: answer.step,
        reason: 'messages_changed',
        missedInputTokens: expect.any(Number),
      },
    ]);
  });

  it("compacts with the request's instructions, under the chunk id it answers", async () => {
    const tabId = await gateway.createTab();
    await say(tabId, 'Tell me about fog. [[sim: words 30]]', 1);
    await say(tabId, 'And hail? [[sim: words 30]]', 2);

    const instructions = 'Keep only the names of the weather kinds.';
    const response = await gateway.request('POST', `/v1/tabs/${tabId}/compact`, {
      body: { instructions },
    });
    expect(response.status).toBe(202);
    const { chunkId } = response.body as { chunkId: string };
    const log = await idleWith(tabId, (log) => log.some((chunk) => chunk.type === 'compaction'));
    expect(log.find((chunk) => chunk.type === 'compaction')?.id).toBe(chunkId);
    const compaction = simulator.requests.findLast(
      (request) =>
        (request.body as { compaction?: unknown }).compaction !== undefined &&
        JSON.stringify(request.body).includes('And hail?'),
    );
    expect(compaction?.body).toMatchObject({ compaction: { type: 'summarize', instructions } });
    expect(compaction?.status).toBe(200);
  });

  it('compacts once for a replayed Idempotency-Key, even with more to summarize since', async () => {
    const tabId = await gateway.createTab();
    await say(tabId, 'Tell me about frost. [[sim: words 30]]', 1);
    await say(tabId, 'And dew? [[sim: words 30]]', 2);
    const compact = () =>
      gateway.request('POST', `/v1/tabs/${tabId}/compact`, {
        headers: { 'idempotency-key': 'compact-once' },
      });

    const first = await compact();
    expect(first.status).toBe(202);
    await idleWith(tabId, (log) => log.some((chunk) => chunk.type === 'compaction'));
    // Two more turns: a compaction now would have something new to summarize.
    await say(tabId, 'And mist? [[sim: words 30]]', 3);
    await say(tabId, 'And sleet? [[sim: words 30]]', 4);
    const replay = await compact();
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const deadline = Date.now() + 10_000;
    while ((await gateway.backend.store.inboxList(tabId)).length > 0) {
      if (Date.now() > deadline) throw new Error('the replay never left the inbox');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // A fresh key compacts again: the replay above was refused, not merely idle.
    const other = await gateway.request('POST', `/v1/tabs/${tabId}/compact`, {
      headers: { 'idempotency-key': 'compact-twice' },
    });
    expect(other.status).toBe(202);
    const log = await idleWith(
      tabId,
      (log) => log.filter((chunk) => chunk.type === 'compaction').length >= 2,
    );
    const found = log.filter((chunk) => chunk.type === 'compaction');
    expect(found.map((chunk) => chunk.id)).toEqual([
      (first.body as { chunkId: string }).chunkId,
      (other.body as { chunkId: string }).chunkId,
    ]);
    // Nor did the replay cost a compaction request.
    const asked = simulator.requests.filter(
      (request) =>
        (request.body as { compaction?: unknown }).compaction !== undefined &&
        ['Tell me about frost.', 'And sleet?'].some((text) =>
          JSON.stringify(request.body).includes(text),
        ),
    );
    expect(asked).toHaveLength(2);
  });

  it('refuses a key sent again with other instructions with 422, and queues nothing', async () => {
    const tabId = await gateway.createTab();
    const compact = (instructions: string) =>
      gateway.request('POST', `/v1/tabs/${tabId}/compact`, {
        headers: { 'idempotency-key': 'compact-reused' },
        body: { instructions },
      });
    const first = await compact('Keep the names.');
    expect(first.status).toBe(202);
    const deadline = Date.now() + 10_000;
    while ((await gateway.backend.store.inboxList(tabId)).length > 0) {
      if (Date.now() > deadline) throw new Error('the compaction never left the inbox');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const reused = await compact('Keep the numbers.');
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ error: { code: 'idempotency_key_reused' } });
    // Nothing of the refused request: the first may still be on its way to the inbox (the
    // wait above can pass before the worker's intake stores it), so only the other text counts.
    const inbox = await gateway.backend.store.inboxList(tabId);
    expect(inbox.filter((item) => item.text === 'Keep the numbers.')).toEqual([]);
    // The same instructions again are a replay of the first request.
    const replay = await compact('Keep the names.');
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
  });

  it('refuses blank, mistyped or unknown fields with 400, and queues nothing', async () => {
    const tabId = await gateway.createTab();
    for (const body of [{ instructions: '   ' }, { instructions: 7 }, { instruction: 'x' }]) {
      const response = await gateway.request('POST', `/v1/tabs/${tabId}/compact`, { body });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'invalid_input' } });
    }
    const tooLong = await gateway.request('POST', `/v1/tabs/${tabId}/compact`, {
      body: { instructions: 'x'.repeat(20_001) },
    });
    expect(tooLong.status).toBe(400);
    expect(await gateway.backend.store.inboxList(tabId)).toEqual([]);
    expect(await chunks(tabId)).toEqual([]);
  });

  it('answers 409 while a turn runs, and stores nothing', async () => {
    const tabId = await gateway.createTab();
    await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
      body: { text: 'Go slowly. [[sim: words 60]] [[sim: rate 30]]' },
    });
    const deadline = Date.now() + 10_000;
    while ((await tabOf(tabId)).status !== 'running') {
      if (Date.now() > deadline) throw new Error('the turn never started');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const response = await gateway.request('POST', `/v1/tabs/${tabId}/compact`);
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ error: { code: 'conflict' } });
    const log = await idleWith(tabId, (log) => log.some((chunk) => chunk.role === 'assistant'));
    expect(log.some((chunk) => chunk.type === 'compaction')).toBe(false);
  });

  it('on a tab with nothing to summarize runs a turn that stores nothing', async () => {
    const tabId = await gateway.createTab();
    expect((await gateway.request('POST', `/v1/tabs/${tabId}/compact`)).status).toBe(202);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const tab = await tabOf(tabId);
      const inbox = await gateway.backend.store.inboxList(tabId);
      if (tab.status === 'idle' && inbox.length === 0) break;
      if (Date.now() > deadline) throw new Error('the compaction turn never ran');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await chunks(tabId)).toEqual([]);
  });
});
