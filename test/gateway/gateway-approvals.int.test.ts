import type { Chunk, Tab } from '@chunklog/chunk-core';
import {
  embeddedBackend,
  type GatewayHarness,
  openEventSource,
  openWebSocket,
  sealsOf,
  startGateway,
} from '@chunklog/gateway/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedWorker } from '../support/simulated-worker';

describe('POST /v1/tabs/:tabId/approvals (embedded backend, real worker and simulator)', () => {
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

  async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() > deadline) throw new Error(`never: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** A tab whose calculator calls wait for a person, paused on one such call. */
  async function pausedTab(text = 'Sum [[sim: tool calculator {"expression":"6*7"}]]') {
    const created = await gateway.request('POST', '/v1/tabs', {
      body: { config: { approval: { tools: ['calculator'] } } },
    });
    expect(created.status).toBe(201);
    const tabId = (created.body as { tab: Tab }).tab.id;
    expect(
      (await gateway.request('POST', `/v1/tabs/${tabId}/messages`, { body: { text } })).status,
    ).toBe(202);
    const tab = await until(
      () => tabOf(tabId),
      (tab) => tab.status === 'waiting',
    );
    return { tabId, tab, callId: tab.waiting!.calls[0]!.callId };
  }

  it('validates the policy like the rest of the config', async () => {
    const bad = await gateway.request('POST', '/v1/tabs', {
      body: { config: { approval: { tools: ['no spaces'] } } },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('approval');
    const unknown = await gateway.request('POST', '/v1/tabs', {
      body: { config: { approval: { tools: 'all', after: 5 } } },
    });
    expect(unknown.status).toBe(400);
  });

  it('shows the waiting calls, takes a decision once, and streams the pause and the decision in order', async () => {
    const { tabId, tab, callId } = await pausedTab();
    expect(tab.waiting).toMatchObject({
      calls: [{ callId, name: 'calculator', arguments: { expression: '6*7' } }],
      expiresAt: null,
    });
    expect(tab.activeTurnId).toBeNull();
    const auth = { authorization: `Bearer ${gateway.tenantA.key}` };
    const sse = openEventSource(`${gateway.baseUrl}/v1/tabs/${tabId}/events`, auth);
    const ws = await openWebSocket(
      `${gateway.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`,
      auth,
    );
    try {
      const live = await sse.waitFor((event) => event.event === 'stream-live');
      expect((live.data as { status: string }).status).toBe('waiting');

      // What may not happen while it waits.
      const reject = await gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
        body: { text: 'now', mode: 'reject' },
      });
      expect(reject.status).toBe(409);
      expect((await gateway.request('POST', `/v1/tabs/${tabId}/compact`)).status).toBe(409);
      // A bad decision stores nothing.
      for (const body of [
        { decisions: [{ callId: 'toolu_nope', decision: 'approve' }] },
        { decisions: [{ callId, decision: 'approve', input: { expression: 7 } }] },
        { decisions: [{ callId, decision: 'deny', input: { expression: '1' } }] },
        { decisions: [{ callId, decision: 'maybe' }] },
        { decisions: [] },
      ]) {
        const refused = await gateway.request('POST', `/v1/tabs/${tabId}/approvals`, { body });
        expect([400, 409]).toContain(refused.status);
      }
      const schemaRefusal = await gateway.request('POST', `/v1/tabs/${tabId}/approvals`, {
        body: { decisions: [{ callId, decision: 'approve', input: { expression: 7 } }] },
      });
      expect(schemaRefusal.status).toBe(400);
      expect((schemaRefusal.body as { error: { message: string } }).error.message).toMatch(
        /decisions\[0\]\.input.*calculator/,
      );
      // Another tenant cannot see or decide it.
      const foreign = await gateway.request('POST', `/v1/tabs/${tabId}/approvals`, {
        key: gateway.tenantB.key,
        body: { decisions: [{ callId, decision: 'approve' }] },
      });
      expect(foreign.status).toBe(404);
      expect((await tabOf(tabId)).status).toBe('waiting');

      const accepted = await gateway.request('POST', `/v1/tabs/${tabId}/approvals`, {
        headers: { 'idempotency-key': `approve-${tabId}` },
        body: { decisions: [{ callId, decision: 'approve', input: { expression: '2+3' } }] },
      });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toEqual({
        decisions: [
          expect.objectContaining({ callId, decision: 'approve', input: { expression: '2+3' } }),
        ],
      });
      const replay = await gateway.request('POST', `/v1/tabs/${tabId}/approvals`, {
        headers: { 'idempotency-key': `approve-${tabId}` },
        body: { decisions: [{ callId, decision: 'approve', input: { expression: '2+3' } }] },
      });
      expect(replay.status).toBe(202);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const second = await gateway.request('POST', `/v1/tabs/${tabId}/approvals`, {
        body: { decisions: [{ callId, decision: 'deny', reason: 'changed my mind' }] },
      });
      expect(second.status).toBe(409);
      expect(second.body).toMatchObject({
        error: { code: 'conflict' },
        decisions: [{ callId, decision: 'approve' }],
      });

      const done = await until(
        () => tabOf(tabId),
        (tab) => tab.status === 'idle',
      );
      expect(done.waiting).toBeNull();
      const log = await chunksOf(tabId);
      const result = log.find((chunk) => chunk.type === 'tool_result');
      expect(result?.data).toMatchObject({ result: { value: 5 }, isError: false });
      const last = log.at(-1)!;
      await sse.waitFor((event) => event.id === String(last.seq));
      await ws.waitFor(
        (event) => event.id === String(last.seq) || sealsOf(ws.events).length >= log.length,
      );
      for (const client of [sse, ws]) {
        const kinds = client.events.map((event) => event.event);
        const resolved = kinds.indexOf('approval-resolved');
        expect(resolved).toBeGreaterThan(-1);
        // Each seq once and in order; the decision's seal comes before its event.
        const seqs = sealsOf(client.events).map((chunk) => chunk.seq);
        expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
        const decisionSeal = client.events.findIndex(
          (event) =>
            event.event === 'chunk-seal' &&
            (event.data as { chunk: Chunk }).chunk.type === 'approval_decision',
        );
        expect(decisionSeal).toBeGreaterThan(-1);
        expect(decisionSeal).toBeLessThan(resolved);
      }
    } finally {
      sse.close();
      ws.close();
    }
  });

  it('a decision on a tab that waits for nothing answers 409 and stores nothing', async () => {
    const tabId = await gateway.createTab();
    const response = await gateway.request('POST', `/v1/tabs/${tabId}/approvals`, {
      body: { decisions: [{ callId: 'toolu_1', decision: 'approve' }] },
    });
    expect(response.status).toBe(409);
    expect((await tabOf(tabId)).status).toBe('idle');
  });

  it('a cancel of a waiting tab denies its calls and ends the turn cancelled', async () => {
    const { tabId } = await pausedTab();
    expect((await gateway.request('POST', `/v1/tabs/${tabId}/cancel`)).status).toBe(202);
    await until(
      () => tabOf(tabId),
      (tab) => tab.status === 'idle',
    );
    const log = await chunksOf(tabId);
    expect(log.find((chunk) => chunk.type === 'approval_decision')?.data).toMatchObject({
      decision: 'deny',
      reason: 'cancelled',
    });
  });
});
