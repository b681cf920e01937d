import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  buildRequest,
  type Chunk,
  COMPACTION_BETA,
  compactionDataFromResponse,
  type RequestOptions,
  type WireRequest,
} from '@chunklog/chunk-core';
import { arbitraryCompactionPlan, insertCompactions } from '@chunklog/chunk-core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useSimulatorClient } from './testing/simulator-client';

const model = 'claude-sonnet-4-6';

const sim = useSimulatorClient();

function send(request: WireRequest) {
  return sim.client.beta.messages.create({
    ...(request as MessageCreateParamsNonStreaming),
    betas: [COMPACTION_BETA],
  });
}

/** The log as the API would have signed it: each signed thinking block under the simulator's key. */
function signedBySimulator(log: Chunk[]): Chunk[] {
  return log.map((chunk) =>
    chunk.type === 'thinking' && 'text' in chunk.data && chunk.data.signature
      ? { ...chunk, data: { ...chunk.data, signature: sim.simulator.signer.sign(chunk.data.text) } }
      : chunk,
  );
}

describe('requests built from logs with compactions, against the simulator', () => {
  it('are all accepted: every compaction request, and every step after a compaction', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryCompactionPlan, fc.boolean(), async (plan, thinking) => {
        const options: RequestOptions = thinking
          ? { model, maxTokens: 2048, thinking: { budgetTokens: 1024 } }
          : { model, maxTokens: 256 };
        const log = signedBySimulator(plan.log);
        const chunks = await insertCompactions({ ...plan, log }, options, async (compaction) => {
          const answer = await send(compaction.request);
          expect(answer.stop_reason).toBe('compaction');
          const data = compactionDataFromResponse(answer, compaction.throughSeq);
          if (data === undefined) throw new Error('the simulator answered no compaction block');
          return data.block;
        });
        const ends = chunks.flatMap((chunk, index) => (chunk.type === 'compaction' ? [index] : []));
        for (const end of [...ends, chunks.length - 1]) {
          const request = buildRequest({ ...options, chunks: chunks.slice(0, end + 1) });
          const answer = await send(request);
          expect(answer.type).toBe('message');
        }
      }),
      { numRuns: 40 },
    );
  });
});
