import type { Chunk } from '@chunklog/chunk-core';

/** The tab and the turn of the chunks `sealedText` makes. */
export const testTabId = '00000000-0000-4000-8000-000000000001';
export const testTurnId = '00000000-0000-4000-8000-000000000002';

/** A sealed text chunk at `seq` of the test tab, as a chunk-seal event carries it. */
export function sealedText(seq: number, role: 'user' | 'assistant', text: string): Chunk {
  return {
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    tabId: testTabId,
    seq,
    turnId: testTurnId,
    step: 0,
    createdAt: 0,
    type: 'text',
    role,
    data: { text },
  } as Chunk;
}
