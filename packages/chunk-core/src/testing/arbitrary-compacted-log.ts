/**
 * Test support: worker-shaped logs with compactions in them, made where a worker makes them
 * (before a step or a turn starts) and anywhere else (a compaction that ran while a step's
 * chunks were still being appended).
 */
import fc from 'fast-check';
import {
  buildCompactionRequest,
  type CompactionRequest,
} from '../compaction/build-compaction-request';
import type { CompactionBlock } from '../compaction/compaction';
import type { Chunk } from '../schemas/chunk';
import type { RequestOptions } from '../wire/build-request';
import { arbitraryChunkLog, TEST_TAB_ID, testUuid } from './arbitrary-chunk-log';

/**
 * The indexes a compaction may be made before: where a new step's assistant content or a new
 * turn's first chunk begins, and the end of the log.
 */
export function stepBoundaries(chunks: readonly Chunk[]): number[] {
  const boundaries: number[] = [];
  let step: string | undefined;
  chunks.forEach((chunk, index) => {
    const startsTurn = index > 0 && chunk.turnId !== chunks[index - 1]?.turnId;
    const isAssistant =
      chunk.type === 'thinking' ||
      chunk.type === 'tool_call' ||
      (chunk.type === 'text' && chunk.role === 'assistant');
    const key = `${chunk.turnId}/${chunk.step}`;
    if (startsTurn || (isAssistant && key !== step && index > 0)) boundaries.push(index);
    if (isAssistant) step = key;
  });
  boundaries.push(chunks.length);
  return [...new Set(boundaries)];
}

/** A log and where to compact it. */
export type CompactionPlan = { log: Chunk[]; compactBefore: number[] };

/**
 * Worker-shaped logs, each with a few points chosen for a compaction: step boundaries (where a
 * worker compacts before a step) mixed with any other index (a compaction that started while a
 * step's chunks were still being appended, which then land after it).
 */
export const arbitraryCompactionPlan: fc.Arbitrary<CompactionPlan> = arbitraryChunkLog.chain(
  (log) => {
    const boundaries = stepBoundaries(log);
    const anywhere = Array.from({ length: log.length + 1 }, (_, index) => index);
    return fc
      .tuple(
        fc.subarray(boundaries, { maxLength: Math.min(3, boundaries.length) }),
        fc.subarray(anywhere, { maxLength: 2 }),
      )
      .map(([atBoundaries, atAny]) => ({
        log,
        compactBefore: [...new Set([...atBoundaries, ...atAny])].sort((a, b) => a - b),
      }));
  },
);

/** A block as a test stands in for the API's answer (no real signature). */
export function fakeCompactionBlock(request: CompactionRequest): CompactionBlock {
  return {
    type: 'compaction',
    content: `Summary of the conversation through seq ${request.throughSeq}.`,
    encrypted_content: `enc-${request.throughSeq}`,
    signature: `sig-${request.throughSeq}`,
    tool_changes: [],
  };
}

/**
 * The plan's log with a compaction chunk appended before each chosen index, its block made by
 * `makeBlock` from the compaction request the builder gives for the log so far (no chunk when
 * there is nothing to summarize). Seqs are renumbered to stay consecutive.
 */
export async function insertCompactions(
  plan: CompactionPlan,
  options: RequestOptions,
  makeBlock: (request: CompactionRequest) => CompactionBlock | Promise<CompactionBlock>,
): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  const renumber = (chunk: Chunk): Chunk => {
    const seq = chunks.length + 1;
    return { ...chunk, seq, id: testUuid(seq), createdAt: 1_700_000_000_000 + seq };
  };
  for (let index = 0; index <= plan.log.length; index += 1) {
    if (plan.compactBefore.includes(index)) {
      const request = buildCompactionRequest({ ...options, chunks });
      if (request !== undefined) {
        const previous = chunks.at(-1);
        chunks.push(
          renumber({
            id: '',
            tabId: TEST_TAB_ID,
            seq: 0,
            turnId: previous?.turnId ?? testUuid(1_000_000),
            step: previous?.step ?? 0,
            createdAt: 0,
            type: 'compaction',
            role: 'assistant',
            data: { block: await makeBlock(request), throughSeq: request.throughSeq },
          }),
        );
      }
    }
    const chunk = plan.log[index];
    if (chunk !== undefined) chunks.push(renumber(chunk));
  }
  return chunks;
}
