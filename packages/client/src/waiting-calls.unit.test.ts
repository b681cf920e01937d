import type { Chunk } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { waitingCalls } from './waiting-calls';

const turnId = '00000000-0000-4000-8000-00000000a001';
let seq = 0;
function chunk(body: Pick<Chunk, 'type' | 'role' | 'data'>): Chunk {
  seq += 1;
  return {
    id: `00000000-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`,
    tabId: '00000000-0000-4000-8000-0000000000ab',
    seq,
    turnId,
    step: 0,
    createdAt: 1_700_000_000_000 + seq,
    ...body,
  } as Chunk;
}
const call = (callId: string, name: string) =>
  chunk({ type: 'tool_call', role: 'assistant', data: { callId, name, arguments: { n: 1 } } });
const request = (callId: string, name: string, expiresAt: number | null = null) =>
  chunk({
    type: 'approval_request',
    role: 'system',
    data: { callId, name, arguments: { n: 1 }, expiresAt },
  });
const decision = (callId: string, verdict: 'approve' | 'deny') =>
  chunk({
    type: 'approval_decision',
    role: 'system',
    data: { callId, name: 'x', decision: verdict, decidedBy: 'k', decidedAt: 1 },
  });
const result = (callId: string) =>
  chunk({
    type: 'tool_result',
    role: 'tool',
    data: { callId, name: 'x', result: 'ok', isError: false },
  });

describe('waitingCalls', () => {
  it('lists requests without a decision or a result, in the order asked', () => {
    const pay = request('c_pay', 'pay', 5_000);
    const mail = request('c_mail', 'mail');
    const log = [call('c_pay', 'pay'), call('c_mail', 'mail'), call('c_free', 'free')];
    log.push(pay, mail, result('c_free'));
    expect(waitingCalls(log)).toEqual([
      {
        callId: 'c_pay',
        name: 'pay',
        arguments: { n: 1 },
        expiresAt: 5_000,
        turnId,
        requestId: pay.id,
      },
      {
        callId: 'c_mail',
        name: 'mail',
        arguments: { n: 1 },
        expiresAt: null,
        turnId,
        requestId: mail.id,
      },
    ]);
  });

  it('drops a call once decided, or once answered without a decision in view', () => {
    const log = [call('a', 'pay'), call('b', 'pay'), request('a', 'pay'), request('b', 'pay')];
    expect(waitingCalls([...log, decision('a', 'deny')]).map((c) => c.callId)).toEqual(['b']);
    expect(waitingCalls([...log, result('b')]).map((c) => c.callId)).toEqual(['a']);
    expect(waitingCalls([...log, decision('a', 'approve'), decision('b', 'deny')])).toEqual([]);
    expect(waitingCalls([call('a', 'pay'), result('a')])).toEqual([]);
  });
});
