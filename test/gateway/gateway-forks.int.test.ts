import type { Chunk, Tab } from '@chunklog/chunk-core';
import { embeddedBackend, type GatewayHarness, startGateway } from '@chunklog/gateway/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedWorker } from '../support/simulated-worker';

describe('forks, edit and regenerate (embedded backend, real worker and simulator)', () => {
  let gateway: GatewayHarness;
  let running: Awaited<ReturnType<typeof startSimulatedWorker>> | undefined;

  beforeAll(async () => {
    gateway = await startGateway(embeddedBackend);
    running = await startSimulatedWorker(gateway);
  });
  afterAll(async () => {
    await running?.close();
    await gateway?.close();
  });

  const tabOf = async (tabId: string) =>
    ((await gateway.request('GET', `/v1/tabs/${tabId}`)).body as { tab: Tab }).tab;
  const chunksOf = async (tabId: string) =>
    (
      (await gateway.request('GET', `/v1/tabs/${tabId}/chunks?limit=500`)).body as {
        chunks: Chunk[];
      }
    ).chunks;
  const system = `You check sums. ${'Answer with the figure and nothing else. '.repeat(150)}`;

  /** Sends `text` and waits until the tab is idle with `answers` assistant texts. */
  async function say(tabId: string, text: string, answers: number): Promise<Chunk[]> {
    const sent = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, { body: { text } });
    expect(sent.status).toBe(202);
    return settled(tabId, answers);
  }
  async function settled(tabId: string, answers: number): Promise<Chunk[]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const log = await chunksOf(tabId);
      const done = log.filter((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
      if ((await tabOf(tabId)).status === 'idle' && done.length >= answers) return log;
      if (Date.now() > deadline) throw new Error(`tab ${tabId} never settled`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('forks by reference: pages and /context as the parent had them, refusals named', async () => {
    const created = await gateway.request('POST', '/v1/tabs', { body: { config: { system } } });
    const parentId = (created.body as { tab: Tab }).tab.id;
    await say(parentId, 'First [[sim: tool calculator {"expression":"6*7"}]]', 1);
    const parentLog = await say(parentId, 'Second question', 2);
    const call = parentLog.find((chunk) => chunk.type === 'tool_call')!;

    // Inside the first step (between the call and its result): refused, the way out named.
    const inside = await gateway.request('POST', `/v1/tabs/${parentId}/forks`, {
      body: { atSeq: call.seq },
    });
    expect(inside.status).toBe(400);
    expect((inside.body as { error: { message: string } }).error.message).toMatch(/fork at \d+/);
    expect(
      (
        await gateway.request('POST', `/v1/tabs/${parentId}/forks`, {
          body: { atSeq: parentLog.length + 5 },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await gateway.request('POST', `/v1/tabs/${parentId}/forks`, {
          key: gateway.tenantB.key,
          body: { atSeq: 1 },
        })
      ).status,
    ).toBe(404);

    // After the first turn: the fork shows it, and its next request starts as the parent's did.
    const firstTurnEnd = parentLog.findIndex((chunk) => chunk.role === 'user' && chunk.seq > 1);
    const atSeq = parentLog[firstTurnEnd - 1]!.seq;
    const forked = await gateway.request('POST', `/v1/tabs/${parentId}/forks`, {
      headers: { 'idempotency-key': `fork-${parentId}` },
      body: { atSeq, title: 'a branch' },
    });
    expect(forked.status).toBe(201);
    const fork = (forked.body as { tab: Tab }).tab;
    expect(fork).toMatchObject({
      forkOf: parentId,
      forkSeq: atSeq,
      lastSeq: atSeq,
      title: 'a branch',
    });
    const replay = await gateway.request('POST', `/v1/tabs/${parentId}/forks`, {
      headers: { 'idempotency-key': `fork-${parentId}` },
      body: { atSeq, title: 'a branch' },
    });
    expect((replay.body as { tab: Tab }).tab.id).toBe(fork.id);
    const forkLog = await chunksOf(fork.id);
    expect(forkLog.map(({ id, seq, data }) => ({ id, seq, data }))).toEqual(
      parentLog.slice(0, atSeq).map(({ id, seq, data }) => ({ id, seq, data })),
    );
    const versions = await gateway.request('GET', `/v1/tabs/${parentId}/forks`);
    expect((versions.body as { tabs: Tab[] }).tabs.map((tab) => tab.id)).toEqual([fork.id]);

    // The fork answers on its own; the parent does not move.
    const own = await say(fork.id, 'Another second question', 2);
    expect(own.slice(atSeq).every((chunk) => chunk.seq > atSeq)).toBe(true);
    expect(await chunksOf(parentId)).toEqual(parentLog);
  });

  it('edits an earlier message and regenerates an answer, reading the parent’s prompt cache', async () => {
    const created = await gateway.request('POST', '/v1/tabs', { body: { config: { system } } });
    const parentId = (created.body as { tab: Tab }).tab.id;
    await say(parentId, 'Sum it [[sim: tool calculator {"expression":"6*7"}]]', 1);
    const log = await say(parentId, 'And what now?', 2);
    const second = log.find(
      (chunk) =>
        chunk.role === 'user' && chunk.type === 'text' && chunk.data.text === 'And what now?',
    )!;

    const regenerated = await gateway.request('POST', `/v1/tabs/${parentId}/regenerate`, {
      body: { seq: second.seq },
    });
    expect(regenerated.status).toBe(201);
    const again = regenerated.body as { tab: Tab; chunkId: string };
    const regenLog = await settled(again.tab.id, 2);
    expect(regenLog.find((chunk) => chunk.id === again.chunkId)?.data).toEqual({
      text: 'And what now?',
    });
    const doneEvents = running!.simulator.requests.filter((request) =>
      JSON.stringify(request.body).includes('And what now?'),
    );
    // The regenerated turn's prompt is the parent's, byte for byte (only the diagnostics field
    // naming the tab's previous response differs: the fork has none), and reads its cache.
    const [original, repeat] = doneEvents;
    const prompt = (body: unknown) => {
      const { diagnostics: _diagnostics, ...rest } = body as Record<string, unknown>;
      return JSON.stringify(rest);
    };
    expect(prompt(repeat!.body)).toBe(prompt(original!.body));
    const usage = repeat!.usage as { input_tokens: number; cache_read_input_tokens: number };
    expect(
      usage.cache_read_input_tokens / (usage.cache_read_input_tokens + usage.input_tokens),
    ).toBeGreaterThanOrEqual(0.9);

    const edited = await gateway.request('POST', `/v1/tabs/${parentId}/edit`, {
      body: { seq: second.seq, text: 'And what then?' },
    });
    expect(edited.status).toBe(201);
    const editedFork = edited.body as { tab: Tab; chunkId: string };
    const editedLog = await settled(editedFork.tab.id, 2);
    expect(editedLog.filter((chunk) => chunk.role === 'user').map((chunk) => chunk.data)).toEqual([
      { text: 'Sum it [[sim: tool calculator {"expression":"6*7"}]]' },
      { text: 'And what then?' },
    ]);
    const notUser = await gateway.request('POST', `/v1/tabs/${parentId}/edit`, {
      body: { seq: second.seq + 1, text: 'x' },
    });
    expect(notUser.status).toBe(400);
    const forks = await gateway.request('GET', `/v1/tabs/${parentId}/forks`);
    expect((forks.body as { tabs: Tab[] }).tabs).toHaveLength(2);
  });
});
