import { describe, expect, it } from 'vitest';
import type { Chunk } from '../schemas/chunk';
import { isForkPoint, nearestForkPoints } from './fork-point';

const tabId = '00000000-0000-4000-8000-000000000001';
const turnA = '00000000-0000-4000-8000-00000000000a';
const turnB = '00000000-0000-4000-8000-00000000000b';
let seq = 0;
const chunk = (turnId: string, step: number, body: Pick<Chunk, 'role' | 'type' | 'data'>) =>
  ({ id: crypto.randomUUID(), tabId, seq: ++seq, turnId, step, createdAt: 0, ...body }) as Chunk;

const log = [
  chunk(turnA, 0, { role: 'user', type: 'text', data: { text: 'sum' } }), // 1
  chunk(turnA, 0, { role: 'assistant', type: 'text', data: { text: 'on it' } }), // 2
  chunk(turnA, 0, {
    role: 'assistant',
    type: 'tool_call',
    data: { callId: 'c1', name: 'calculator', arguments: {} },
  }), // 3
  chunk(turnA, 0, {
    role: 'tool',
    type: 'tool_result',
    data: { callId: 'c1', name: 'calculator', result: 42, isError: false },
  }), // 4
  chunk(turnA, 1, { role: 'assistant', type: 'text', data: { text: '42' } }), // 5
  chunk(turnB, 0, { role: 'user', type: 'text', data: { text: 'again' } }), // 6
  chunk(turnB, 0, {
    role: 'assistant',
    type: 'tool_call',
    data: { callId: 'c2', name: 'calculator', arguments: {} },
  }), // 7
];

describe('isForkPoint', () => {
  it('allows turn ends and step ends whose calls are answered, nothing that cuts a step', () => {
    const allowed = [0, 1, 2, 3, 4, 5, 6, 7].filter((at) => isForkPoint(log, at));
    // 1: the user message, before the model's answer; 4: after the step's results; 5: the
    // turn's end. 2 and 3 cut the step; 6 ends at a user message the model answers next (a
    // regenerate); 7 leaves a call unanswered.
    expect(allowed).toEqual([0, 1, 4, 5, 6]);
  });

  it('names the nearest allowed seqs around a refused one', () => {
    expect(nearestForkPoints(log, 3)).toEqual({ below: 1, above: 4 });
    expect(nearestForkPoints(log, 7)).toEqual({ below: 6, above: null });
  });
});
