import { validateRequest } from '@chunklog/anthropic-sim';
import { describe, expect, it } from 'vitest';
import { buildRequest } from '../wire/build-request';
import type { FoldableChunk } from '../wire/message-fold';
import { buildCompactionRequest } from './build-compaction-request';
import { compactionAsText, SUMMARY_TEXT_PREFIX } from './compaction-as-text';

const turn = (index: number) => `00000000-0000-4000-8000-00000000000${index}`;
const block = {
  type: 'compaction' as const,
  content: 'We talked about rain.',
  encrypted_content: null,
  signature: 'sig',
  tool_changes: [],
};
const user = (seq: number, text: string): FoldableChunk => ({
  type: 'text',
  role: 'user',
  data: { text },
  turnId: turn(seq),
  step: 0,
  seq,
});
const answer = (seq: number, text: string): FoldableChunk => ({
  type: 'text',
  role: 'assistant',
  data: { text },
  turnId: turn(seq - 1),
  step: 0,
  seq,
});

describe('compactionAsText', () => {
  // A compaction through seq 2 appended (seq 4) while the answer at seq 3 was written.
  const log: FoldableChunk[] = [
    user(1, 'Rain?'),
    user(2, 'Snow?'),
    answer(3, 'Cold.'),
    {
      type: 'compaction',
      role: 'assistant',
      data: { block, throughSeq: 2 },
      turnId: turn(9),
      step: 0,
      seq: 4,
    },
    user(5, 'Wind?'),
  ];

  it('puts the summary as user text at the cut, then the chunks above the cut', () => {
    const view = compactionAsText(log)!;
    expect(view.map((chunk) => chunk.seq)).toEqual([2, 3, 5]);
    expect(view[0]).toMatchObject({
      type: 'text',
      role: 'user',
      data: { text: `${SUMMARY_TEXT_PREFIX}\n\nWe talked about rain.` },
    });
  });

  it('builds a valid request and a compaction request that carry no block', () => {
    const view = compactionAsText(log)!;
    const options = { model: 'claude-sonnet-4-6', maxTokens: 1024 };
    const request = buildRequest({ ...options, chunks: view });
    expect(validateRequest(request)).toEqual([]);
    expect(JSON.stringify(request)).not.toContain('"compaction"');
    const compaction = buildCompactionRequest({ ...options, chunks: view });
    expect(compaction?.throughSeq).toBe(5);
    expect(validateRequest(compaction!.request, { compactionBeta: true })).toEqual([]);
  });

  it('is undefined for a log without a compaction', () => {
    expect(compactionAsText([user(1, 'Rain?')])).toBeUndefined();
  });
});
