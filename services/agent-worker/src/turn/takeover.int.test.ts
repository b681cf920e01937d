import type { ChildProcess } from 'node:child_process';
import type { LiveEvent } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { assertGapFree, type Harness, startWorkerProcess, useHarness } from '../testing/harness';

const leaseMs = 1500;
const getHarness = useHarness();

/** The real worker entry (`npm run start:worker`) as a child process on the test's database and prefix. */
async function startChildWorker(h: Harness): Promise<ChildProcess> {
  const { worker } = await startWorkerProcess(
    h,
    {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: h.simulator.url,
      MODEL: 'claude-sonnet-4-6',
      LEASE_MS: String(leaseMs),
      WORKER_ID: 'child-worker',
    },
    /agent worker ready/,
  );
  return worker;
}

function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      const value = probe();
      if (value !== undefined) resolve(value);
      else if (Date.now() - started > timeoutMs) reject(new Error('timed out'));
      else setTimeout(poll, 10);
    };
    poll();
  });
}

describe('takeover after a worker dies', () => {
  it('takes over a tab whose worker was SIGKILLed mid-tool within the lease time and finishes the turn cleanly', async (context) => {
    const h = getHarness(context);
    const child = await startChildWorker(h);
    const tab = await h.newTab();
    await h.send(
      tab.id,
      'survive a crash [[sim: tool sleep {"milliseconds":1000}]] [[sim: steps 3]]',
    );

    // Kill the child while step 1's tool runs: its call is sealed, its result is not.
    const events = () => h.events.get(tab.id) ?? [];
    const isCall = (event: LiveEvent) =>
      event.event === 'chunk-seal' && event.data.chunk.type === 'tool_call';
    await waitFor(() => (events().filter(isCall).length >= 2 ? true : undefined), 20_000);
    child.kill('SIGKILL');
    const killedAt = Date.now();
    const sealedBeforeKill = (await h.store.readAll(tab.id)).length;

    await h.startWorker({ workerId: 'survivor', leaseMs });
    const takeover = await waitFor(
      () =>
        events().find(
          (event) => event.event === 'chunk-seal' && event.data.chunk.type === 'system',
        ),
      10_000,
    );
    const takeoverDelay = Date.now() - killedAt;
    // Lease expiry plus a sweep (200 ms) and the survivor's start-up; the margin is for a
    // loaded CI machine, and still far below anything but a lease-driven takeover.
    expect(takeoverDelay).toBeLessThan(leaseMs + 3_000);
    expect(takeover.event === 'chunk-seal' && takeover.data.chunk.data).toMatchObject({
      kind: 'takeover',
    });

    const [done] = await h.turnsDone(tab.id, 1, 20_000);
    expect(done?.event === 'turn-done' && done.data.reason).toBe('completed');

    const log = await h.store.readAll(tab.id);
    assertGapFree(log);
    expect(log.length).toBeGreaterThan(sealedBeforeKill);
    expect(new Set(log.map((chunk) => chunk.turnId)).size).toBe(1);
    // Every call has exactly one result; the one the dead worker was running got an error.
    const calls = log.flatMap((chunk) => (chunk.type === 'tool_call' ? [chunk.data.callId] : []));
    const results = log.flatMap((chunk) => (chunk.type === 'tool_result' ? [chunk.data] : []));
    expect(results.map((result) => result.callId).sort()).toEqual([...calls].sort());
    expect(results.filter((result) => result.isError)).toHaveLength(1);
    expect(log.map((chunk) => `${chunk.step}:${chunk.type}`)).toEqual([
      '0:text',
      '0:tool_call',
      '0:tool_result',
      '1:tool_call',
      '1:tool_result',
      '1:system',
      '2:tool_call',
      '2:tool_result',
      '3:text',
    ]);
    // Every request the model got after the crash was valid.
    const requests = h.simulator.requests.filter((request) =>
      JSON.stringify(request.body).includes('survive a crash'),
    );
    expect(requests.every((request) => request.status === 200)).toBe(true);
    const tabAfter = await h.store.getTab(tab.id);
    expect(tabAfter.status).toBe('idle');
  });
});

describe('a stale writer', () => {
  it('is fenced off: the holder re-reads the log, repairs it and finishes the turn', async (context) => {
    const h = getHarness(context);
    const worker = await h.startWorker({ workerId: 'holder', leaseMs: 5_000 });
    try {
      const tab = await h.newTab();
      await h.send(tab.id, 'stale-writer [[sim: tool sleep {"milliseconds":500}]]');
      const call = await waitFor(
        () =>
          h.events
            .get(tab.id)
            ?.find(
              (event) => event.event === 'chunk-seal' && event.data.chunk.type === 'tool_call',
            ),
        10_000,
      );
      const turnId = call.event === 'chunk-seal' ? call.data.chunk.turnId : '';
      // A worker that was paused past its lease wakes up and writes into the turn.
      await h.store.append(tab.id, [
        {
          id: crypto.randomUUID(),
          tabId: tab.id,
          turnId,
          step: 0,
          role: 'system',
          type: 'system',
          data: { kind: 'stale', text: 'written by a stale worker' },
        },
      ]);
      const log = await h.awaitTurnEnd(tab.id, 'completed');
      assertGapFree(log);
      expect(log.map((chunk) => `${chunk.role}/${chunk.type}`)).toEqual([
        'user/text',
        'assistant/tool_call',
        'system/system',
        'tool/tool_result',
        'system/system',
        'assistant/text',
      ]);
      expect(log[3]!.type === 'tool_result' && log[3]!.data.isError).toBe(true);
      expect(log[4]!.type === 'system' && log[4]!.data.kind).toBe('takeover');
    } finally {
      await worker.stop();
    }
  });
});

describe('stopping a worker mid-turn', () => {
  const getOwnHarness = useHarness();

  it('leaves the turn to another worker once the lease lapses, without writing after stop', async (context) => {
    const h = getOwnHarness(context);
    const tab = await h.newTab();
    const leaving = await h.startWorker({
      workerId: 'leaving',
      leaseMs: 1_000,
      stopTimeoutMs: 100,
    });
    await h.send(tab.id, 'graceful [[sim: tool sleep {"milliseconds":1500}]]');
    await waitFor(
      () =>
        h.events
          .get(tab.id)
          ?.find((event) => event.event === 'chunk-seal' && event.data.chunk.type === 'tool_call'),
      10_000,
    );
    await h.startWorker({ workerId: 'staying', leaseMs: 1_000 });
    const leaseBefore = await h.store.getLease(tab.id);
    await leaving.stop();
    const [done] = await h.turnsDone(tab.id, 1, 15_000);
    expect(done?.event === 'turn-done' && done.data.reason).toBe('completed');
    const log = await h.store.readAll(tab.id);
    assertGapFree(log);
    expect(leaseBefore?.owner).toBe('leaving');
    expect(log.map((chunk) => `${chunk.role}/${chunk.type}`)).toEqual([
      'user/text',
      'assistant/tool_call',
      'tool/tool_result',
      'system/system',
      'assistant/text',
    ]);
    // The stopped worker's tool was cut off and never wrote its result: the takeover answered it.
    expect(log[2]!.type === 'tool_result' && log[2]!.data.isError).toBe(true);
    expect(log[3]!.type === 'system' && log[3]!.data.text).toContain('leaving');
  });
});
