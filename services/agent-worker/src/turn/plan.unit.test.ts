import { APIError } from '@anthropic-ai/sdk';
import type { Chunk } from '@chunklog/chunk-core';
import type { InboxMessage } from '@chunklog/store';
import { describe, expect, it } from 'vitest';
import {
  continuesAfterStep,
  pickOpener,
  planFailure,
  planInbox,
  planOpening,
  planStepStart,
  planUnansweredResults,
} from './plan';

const turnId = '00000000-0000-4000-8000-000000000001';
const counter = () => {
  let next = 0;
  return () => `id-${++next}`;
};
const message = (chunkId: string, mode: InboxMessage['mode'], cancelGeneration = 0): InboxMessage =>
  ({ chunkId, text: `text of ${chunkId}`, mode, cancelGeneration }) as InboxMessage;
const stored = (chunk: Omit<Chunk, 'tabId' | 'seq' | 'createdAt'>, seq: number): Chunk =>
  ({ ...chunk, tabId: 'tab', seq, createdAt: 0 }) as Chunk;

describe('pickOpener', () => {
  it('takes the message with the oldest cancel stamp, the first of equals', () => {
    const waiting = [
      message('b', 'interrupt', 2),
      message('a', 'enqueue', 1),
      message('c', 'interrupt', 1),
    ];
    expect(pickOpener(waiting)?.chunkId).toBe('a');
    expect(pickOpener([])).toBeUndefined();
  });
});

describe('planOpening', () => {
  it('writes the opening message once', () => {
    const opening = planOpening([], { chunkId: 'm', text: 'hi' }, turnId);
    expect(opening).toEqual([
      { id: 'm', turnId, step: 0, role: 'user', type: 'text', data: { text: 'hi' } },
    ]);
    const log = [stored(opening[0]! as Chunk, 1)];
    expect(planOpening(log, { chunkId: 'm', text: 'hi' }, turnId)).toEqual([]);
  });
});

describe('planInbox', () => {
  it('folds interrupts in, refuses rejects, leaves enqueued messages waiting', () => {
    const plan = planInbox({
      log: [],
      waiting: [message('i', 'interrupt'), message('r', 'reject'), message('e', 'enqueue')],
      cancelledAt: null,
      turnId,
      step: 3,
      newId: counter(),
    });
    expect(plan.interrupts).toBe(1);
    expect(plan.remove).toEqual(['i', 'r']);
    expect(plan.append).toEqual([
      { id: 'i', turnId, step: 3, role: 'user', type: 'text', data: { text: 'text of i' } },
      {
        id: 'id-1',
        turnId,
        step: 3,
        role: 'system',
        type: 'system',
        data: { kind: 'message-rejected', text: 'A message was rejected: a turn was running.' },
      },
    ]);
  });

  it('clears entries already in the log without writing them again', () => {
    const log = [
      stored({ id: 'i', turnId, step: 0, role: 'user', type: 'text', data: { text: 'x' } }, 1),
    ];
    const plan = planInbox({
      log,
      waiting: [message('i', 'interrupt')],
      cancelledAt: null,
      turnId,
      step: 1,
      newId: counter(),
    });
    expect(plan).toEqual({ append: [], remove: ['i'], interrupts: 0 });
  });

  it('once cancelled, takes only messages accepted before the cancel', () => {
    const plan = planInbox({
      log: [],
      waiting: [message('before', 'interrupt', 1), message('after', 'interrupt', 2)],
      cancelledAt: 2,
      turnId,
      step: 0,
      newId: counter(),
    });
    expect(plan.remove).toEqual(['before']);
    expect(plan.append.map((chunk) => chunk.id)).toEqual(['before']);
  });
});

describe('planUnansweredResults', () => {
  it('answers each open call of the turn with an error result at its step', () => {
    const log = [
      stored(
        {
          id: 'c',
          turnId,
          step: 2,
          role: 'assistant',
          type: 'tool_call',
          data: { callId: 'call-1', name: 'lookup', arguments: {} },
        },
        1,
      ),
    ];
    expect(planUnansweredResults(log, turnId, 'why', counter())).toEqual([
      {
        id: 'id-1',
        turnId,
        step: 2,
        role: 'tool',
        type: 'tool_result',
        data: { callId: 'call-1', name: 'lookup', result: 'why', isError: true },
      },
    ]);
  });
});

describe('planStepStart', () => {
  const input = { turnId, newId: counter(), maxSteps: 3 };
  it('calls the model below the cap, stops on cancel first, says so at the cap', () => {
    expect(planStepStart({ ...input, step: 2, cancelled: false })).toEqual({ kind: 'call-model' });
    expect(planStepStart({ ...input, step: 3, cancelled: true })).toEqual({ kind: 'cancelled' });
    const capped = planStepStart({ ...input, step: 3, cancelled: false });
    expect(capped.kind).toBe('max-steps');
    expect(capped.kind === 'max-steps' && capped.append[0]).toMatchObject({
      step: 2,
      type: 'system',
      data: { kind: 'max-steps' },
    });
  });
});

describe('continuesAfterStep', () => {
  it('goes on for tool calls, pause_turn and interrupts only', () => {
    const base = { toolCalls: 0, stopReason: 'end_turn', interrupts: 0 };
    expect(continuesAfterStep(base)).toBe(false);
    expect(continuesAfterStep({ ...base, toolCalls: 1 })).toBe(true);
    expect(continuesAfterStep({ ...base, stopReason: 'pause_turn' })).toBe(true);
    expect(continuesAfterStep({ ...base, interrupts: 2 })).toBe(true);
  });
});

describe('failures', () => {
  it("records a model failure with its status, a turn failure as the system's", () => {
    const error = APIError.generate(
      400,
      { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } },
      'bad',
      new Headers(),
    );
    expect(
      planFailure({ failed: 'model', error, turnId, step: 1, newId: counter() }),
    ).toMatchObject({
      role: 'assistant',
      type: 'error',
      data: { statusCode: 400 },
    });
    const failure = planFailure({
      failed: 'turn',
      error: new Error('db down'),
      turnId,
      step: 4,
      newId: counter(),
    });
    expect(failure).toMatchObject({ role: 'system', type: 'error', step: 4 });
    expect(failure.type === 'error' && failure.data.message).toMatch(/^The turn failed: .*db down/);
  });
});
