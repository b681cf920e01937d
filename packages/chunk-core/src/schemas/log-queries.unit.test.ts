import { describe, expect, it } from 'vitest';
import { type ChunkDraft, toolResultChunk } from './chunk-drafts';
import { lastStepText, unansweredToolCalls } from './log-queries';

const call = (id: string, turnId: string, step: number, callId: string): ChunkDraft => ({
  id,
  turnId,
  step,
  role: 'assistant',
  type: 'tool_call',
  data: { callId, name: 'lookup', arguments: {} },
});
const text = (
  step: number,
  value: string,
  role: 'user' | 'assistant' = 'assistant',
): ChunkDraft => ({
  id: `${role}-${step}-${value}`,
  turnId: 't',
  step,
  role,
  type: 'text',
  data: { text: value },
});

describe('unansweredToolCalls', () => {
  it("lists the turn's calls without a result, in log order", () => {
    const log = [
      call('a', 't', 0, 'c1'),
      call('b', 't', 0, 'c2'),
      toolResultChunk(
        { id: 'r', turnId: 't', step: 0 },
        { callId: 'c1', name: 'lookup', result: 1, isError: false },
      ),
      call('c', 'other', 1, 'c3'),
      call('d', 't', 1, 'c4'),
    ];
    expect(unansweredToolCalls(log, 't').map((chunk) => chunk.data.callId)).toEqual(['c2', 'c4']);
    expect(unansweredToolCalls(log, 'other').map((chunk) => chunk.id)).toEqual(['c']);
  });
});

describe('lastStepText', () => {
  it("joins the text blocks of the model's last step", () => {
    const log = [text(0, 'question', 'user'), text(0, 'first'), text(1, 'one'), text(1, 'two')];
    expect(lastStepText(log)).toBe('one\ntwo');
  });

  it('is empty when the model wrote nothing', () => {
    expect(lastStepText([text(0, 'question', 'user')])).toBe('');
  });
});
