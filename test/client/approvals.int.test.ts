import {
  ApprovalConflictError,
  ChunklogClient,
  ChunklogError,
  type TabViewSnapshot,
} from '@chunklog/client';
import { readLog, waitFor } from '@chunklog/client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

const CALL = 'Work it out [[sim: tool calculator {"expression":"6*7"}]]';

describe('approvals through @chunklog/client against a real gateway and worker', () => {
  let gateway: RealGateway;
  let client: ChunklogClient;

  beforeAll(async () => {
    gateway = await startRealGateway();
    client = new ChunklogClient({ baseUrl: gateway.url });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function gatedTab() {
    const tab = await client.createTab({ config: { approval: { tools: ['calculator'] } } });
    return tab.id;
  }

  it('the tab view shows the waiting call live, and approve() with edited input resumes the turn', async () => {
    const tabId = await gatedTab();
    const view = client.view(tabId);
    const seen: TabViewSnapshot[] = [];
    view.subscribe(() => seen.push(view.getSnapshot()));
    try {
      await waitFor('live', () => view.getSnapshot().connection === 'live');
      expect(view.getSnapshot().waiting).toEqual([]);
      await client.sendMessage(tabId, { text: CALL });
      await waitFor('the call to wait', () => view.getSnapshot().status === 'waiting');
      await waitFor('the waiting call', () => view.getSnapshot().waiting.length === 1);
      const [waiting] = view.getSnapshot().waiting;
      expect(waiting).toMatchObject({
        name: 'calculator',
        arguments: { expression: '6*7' },
        expiresAt: null,
      });
      // The view agrees with the tab's own account of the pause.
      const tab = await client.getTab(tabId);
      expect(tab.waiting?.calls.map((call) => call.callId)).toEqual([waiting?.callId]);

      const decision = await client.approve(tabId, waiting!.callId, {
        input: { expression: '2+3' },
      });
      expect(decision).toMatchObject({
        callId: waiting!.callId,
        decision: 'approve',
        input: { expression: '2+3' },
      });
      expect(typeof decision.decidedAt).toBe('number');
      await waitFor('the turn to end', () => view.getSnapshot().status === 'idle');
      await waitFor('the call to leave', () => view.getSnapshot().waiting.length === 0);
      const log = await readLog(client, tabId);
      const result = log.find((chunk) => chunk.type === 'tool_result');
      expect(result?.data).toMatchObject({ result: { value: 5 }, isError: false });
      // It was 'waiting' in between, and 'running' again after the decision.
      const statuses = seen.map((snapshot) => snapshot.status);
      expect(statuses.lastIndexOf('running')).toBeGreaterThan(statuses.indexOf('waiting'));

      // A second decision: the first one comes back in the error.
      const conflict = await client
        .deny(tabId, waiting!.callId, { reason: 'too late' })
        .catch((error: unknown) => error);
      expect(conflict).toBeInstanceOf(ApprovalConflictError);
      expect((conflict as ApprovalConflictError).status).toBe(409);
      expect((conflict as ApprovalConflictError).decisions).toEqual([decision]);
    } finally {
      view.close();
    }
  });

  it('deny() answers the call with its reason; a bad edit is a 400 naming the input', async () => {
    const tabId = await gatedTab();
    await client.sendMessage(tabId, { text: CALL });
    await waitFor(
      'the call to wait',
      async () => (await client.getTab(tabId)).status === 'waiting',
    );
    const callId = (await client.getTab(tabId)).waiting!.calls[0]!.callId;

    const refused = await client
      .approve(tabId, callId, { input: { expression: 7 } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ChunklogError);
    expect(refused).not.toBeInstanceOf(ApprovalConflictError);
    expect((refused as ChunklogError).status).toBe(400);
    expect((refused as ChunklogError).message).toContain('decisions[0].input');

    const [denied] = await client.decide(
      tabId,
      [{ callId, decision: 'deny', reason: 'not today' }],
      { idempotencyKey: `deny-${tabId}` },
    );
    expect(denied).toMatchObject({ callId, decision: 'deny', reason: 'not today' });
    await waitFor('the turn to end', async () => (await client.getTab(tabId)).status === 'idle');
    const log = await readLog(client, tabId);
    const result = log.find((chunk) => chunk.type === 'tool_result');
    expect(result?.data).toMatchObject({ isError: true });
    expect(JSON.stringify(result?.data)).toContain('not today');

    // Nothing waits any more: a conflict without decisions is a plain ChunklogError.
    const notWaiting = await client.approve(tabId, 'toolu_nope').catch((error: unknown) => error);
    expect(notWaiting).toBeInstanceOf(ChunklogError);
    expect(notWaiting).not.toBeInstanceOf(ApprovalConflictError);
    expect((notWaiting as ChunklogError).status).toBe(409);
  });

  it('a view opened on a waiting tab shows its calls at once', async () => {
    const tabId = await gatedTab();
    await client.sendMessage(tabId, { text: CALL });
    await waitFor(
      'the call to wait',
      async () => (await client.getTab(tabId)).status === 'waiting',
    );
    const view = client.view(tabId);
    view.subscribe(() => {});
    try {
      await waitFor('live', () => view.getSnapshot().connection === 'live');
      expect(view.getSnapshot().status).toBe('waiting');
      expect(view.getSnapshot().waiting.map((call) => call.name)).toEqual(['calculator']);
    } finally {
      view.close();
    }
  });
});
