import { randomUUID } from 'node:crypto';
import type { ApprovalDecisionRecord, InboxMessage, TabWaiting } from '@chunklog/store';
import { describe, expect, it } from 'vitest';
import { hasWork, planResume, splitGatedCalls } from './approval-plan';

const turnId = randomUUID();
const waiting: TabWaiting = {
  turnId,
  step: 2,
  cancelGeneration: 3,
  expiresAt: 10_000,
  calls: [
    { callId: 'a', name: 'pay', arguments: {} },
    { callId: 'b', name: 'mail', arguments: {} },
  ],
};
const decided = (callId: string): ApprovalDecisionRecord => ({
  callId,
  turnId,
  chunkId: randomUUID(),
  decision: 'approve',
  decidedBy: 'key:x',
  decidedAt: 1,
});
const message = (mode: InboxMessage['mode'], cancelGeneration = 3): InboxMessage => ({
  tabId: randomUUID(),
  chunkId: randomUUID(),
  text: mode === 'approval' ? '' : 'hi',
  mode,
  cancelGeneration,
  createdAt: 1,
});
const plan = (input: Partial<Parameters<typeof planResume>[0]>) =>
  planResume({
    waiting,
    decisions: [],
    inbox: [],
    cancelGeneration: 3,
    now: 5_000,
    newId: randomUUID,
    ...input,
  });

describe('planResume', () => {
  it('resumes once every call is decided, and keeps waiting for a partial decision', () => {
    const wake = message('approval');
    expect(plan({ decisions: [decided('a')], inbox: [wake] })).toEqual({
      kind: 'wait',
      wakeIds: [wake.chunkId],
    });
    expect(plan({ decisions: [decided('a'), decided('b')], inbox: [wake] })).toEqual({
      kind: 'resume',
      systemDenials: [],
      wakeIds: [wake.chunkId],
    });
  });

  it('denies undecided calls on a cancel, an interrupting message or the expiry, in that order', () => {
    const reasons = (input: Partial<Parameters<typeof planResume>[0]>) => {
      const outcome = plan({ decisions: [decided('a')], ...input });
      return outcome.kind === 'resume'
        ? outcome.systemDenials.map((denial) => [denial.callId, denial.reason, denial.decidedBy])
        : outcome.kind;
    };
    expect(reasons({ cancelGeneration: 4, inbox: [message('interrupt')], now: 20_000 })).toEqual([
      ['b', 'cancelled', 'system'],
    ]);
    expect(reasons({ inbox: [message('interrupt')], now: 20_000 })).toEqual([
      ['b', 'interrupted', 'system'],
    ]);
    expect(reasons({ now: 20_000 })).toEqual([['b', 'expired', 'system']]);
    // An enqueued message waits behind the decision; so does a cancel older than the turn.
    expect(reasons({ inbox: [message('enqueue')], cancelGeneration: 3 })).toBe('wait');
    expect(reasons({ inbox: [message('interrupt', 2)] })).toBe('wait');
  });
});

describe('hasWork', () => {
  const paused = { status: 'waiting' as const, waiting: { turnId, calls: [], expiresAt: 10_000 } };
  it('wakes a paused tab only for a decision, an interrupt or the expiry', () => {
    expect(hasWork(paused, [message('enqueue'), message('compact')], 5_000)).toBe(false);
    expect(hasWork(paused, [message('approval')], 5_000)).toBe(true);
    expect(hasWork(paused, [message('interrupt')], 5_000)).toBe(true);
    expect(hasWork(paused, [], 10_000)).toBe(true);
    expect(hasWork({ status: 'idle', waiting: null }, [message('enqueue')])).toBe(true);
    expect(hasWork({ status: 'idle', waiting: null }, [])).toBe(false);
  });
});

describe('splitGatedCalls', () => {
  it('never holds a call the turn cannot run', () => {
    const calls = [
      { callId: '1', name: 'pay', arguments: {} },
      { callId: '2', name: 'pay', arguments: {}, invalidInput: '{' },
      { callId: '3', name: 'unknown', arguments: {} },
      { callId: '4', name: 'get_time', arguments: {} },
    ];
    const { free, gated } = splitGatedCalls(calls, { tools: 'all' }, (name) => name !== 'unknown');
    expect(gated.map((call) => call.callId)).toEqual(['1', '4']);
    expect(free.map((call) => call.callId)).toEqual(['2', '3']);
  });
});
