import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming as BetaRequest } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { createSimulator } from '@chunklog/anthropic-sim';
import {
  type Chunk,
  COMPACTION_BETA,
  type CompactionData,
  type CompactionErrorCode,
  compactionDataFromResponse,
  SUMMARY_TEXT_PREFIX,
} from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { createWorkerMetrics } from '../metrics/worker-metrics';
import { assertGapFree, type Harness, useHarness } from '../testing/harness';
import { compactionRefusal } from './compact';

/*
 * The API's refusals of a compaction block, reached from the worker: a tab whose stored block no
 * longer verifies (signed under another key, or altered in storage) would be refused on every
 * step, forever. The worker compacts again from the block's summary text and answers on.
 * (The builder never produces the other refusals, misplaced or ambiguous blocks, a compaction
 * request ending on an assistant turn or with nothing to summarize: chunk-core's property tests
 * check every request it builds against them, and every request below must be accepted.)
 */
const system = `You answer about the weather. ${'Be precise, brief and kind. '.repeat(20)}`;

/** A compaction block signed by `anthropic`'s simulator, summarizing an unrelated conversation. */
async function signedBlock(anthropic: Anthropic, throughSeq: number): Promise<CompactionData> {
  const answer = await anthropic.beta.messages.create({
    model: 'claude-sonnet-4-6',
    max_tokens: 512,
    messages: [{ role: 'user', content: 'We talked about rain in Oslo and snow in Tromsø.' }],
    compaction: { type: 'summarize' },
    betas: [COMPACTION_BETA],
  });
  const data = compactionDataFromResponse(answer, throughSeq);
  if (data === undefined) throw new Error('the simulator answered no compaction block');
  return data;
}

/** The refusal the simulator gives when `body` (a recorded streaming request) is sent again. */
async function refusalOf(
  harness: Harness,
  body: unknown,
): Promise<CompactionErrorCode | undefined> {
  const { stream: _stream, ...request } = body as BetaRequest & { stream?: boolean };
  try {
    await harness.anthropic.beta.messages.create({ ...request, betas: [COMPACTION_BETA] });
  } catch (error) {
    return compactionRefusal(error);
  }
  return undefined;
}

describe('a compaction block the API refuses (worker, simulator through the SDK)', () => {
  const metrics = createWorkerMetrics();
  const getHarness = useHarness('memory', (harness) => harness.startWorker({ metrics }));

  async function refusedCompactions(): Promise<number> {
    const values = (await metrics.compactions.get()).values;
    return values
      .filter((value) => value.labels.cause === 'refused' && value.labels.outcome === 'compacted')
      .reduce((sum, value) => sum + value.value, 0);
  }

  const cases: {
    code: CompactionErrorCode;
    story: string;
    block: (harness: Harness, throughSeq: number) => Promise<CompactionData>;
  }[] = [
    {
      code: 'compaction_signature_invalid',
      story: 'signed under another key (the key was rotated)',
      async block(_harness, throughSeq) {
        const other = await createSimulator({ logger: () => {} });
        try {
          return await signedBlock(
            new Anthropic({ apiKey: 'test-key', baseURL: other.url, maxRetries: 0 }),
            throughSeq,
          );
        } finally {
          await other.close();
        }
      },
    },
    {
      code: 'compaction_content_mismatch',
      story: 'altered in storage: its content',
      async block(harness, throughSeq) {
        const data = await signedBlock(harness.anthropic, throughSeq);
        return { ...data, block: { ...data.block, content: `${data.block.content} (edited)` } };
      },
    },
    {
      code: 'compaction_tool_changes_mismatch',
      story: 'altered in storage: its tool changes',
      async block(harness, throughSeq) {
        const data = await signedBlock(harness.anthropic, throughSeq);
        const toolChanges = [{ type: 'tool_removal', name: 'calculator' }];
        return { ...data, block: { ...data.block, tool_changes: toolChanges } };
      },
    },
  ];

  for (const { code, story, block } of cases) {
    it(`answers on a tab whose block is ${story} (${code}): compacts again from its summary text`, async (context) => {
      const harness = getHarness(context);
      const tab = await harness.newTab({ system });
      const marker = `refused-${randomUUID()}`;
      await harness.send(tab.id, `${marker} How is the rain? [[sim: words 20]]`);
      await harness.turnsDone(tab.id, 1, 20_000);
      const before = await refusedCompactions();

      // The tab's latest compaction is a block the API will refuse.
      const history = await harness.store.readAll(tab.id);
      const data = await block(harness, history.at(-1)!.seq);
      await harness.store.append(tab.id, [
        {
          id: randomUUID(),
          tabId: tab.id,
          turnId: randomUUID(),
          step: 0,
          role: 'assistant',
          type: 'compaction',
          data,
        },
      ]);

      await harness.send(tab.id, `${marker} And the snow? [[sim: words 5]]`);
      await harness.turnsDone(tab.id, 2, 20_000);
      await harness.send(tab.id, `${marker} And the wind? [[sim: words 5]]`);
      await harness.turnsDone(tab.id, 3, 20_000);

      const reasons = (harness.events.get(tab.id) ?? []).flatMap((event) =>
        event.event === 'turn-done' ? [event.data.reason] : [],
      );
      expect(reasons).toEqual(['completed', 'completed', 'completed']);
      const log = await harness.store.readAll(tab.id);
      assertGapFree(log);
      expect(log.filter((chunk) => chunk.type === 'error')).toEqual([]);
      const answers = log.filter((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
      expect(answers).toHaveLength(3);

      // The refused step, the compaction from the summary text, the step again; then on.
      const requests = harness.requestsMentioning(marker);
      const refused = requests.filter((request) => request.status !== 200);
      expect(refused.map((request) => request.status)).toEqual([400]);
      expect(await refusalOf(harness, refused[0]!.body)).toBe(code);
      const index = requests.indexOf(refused[0]!);
      const compaction = requests[index + 1]!;
      expect(compaction.body).toMatchObject({ compaction: { type: 'summarize' } });
      expect(JSON.stringify(compaction.body)).toContain(SUMMARY_TEXT_PREFIX);
      expect(requests.slice(index + 1).every((request) => request.status === 200)).toBe(true);
      expect(await refusedCompactions()).toBe(before + 1);

      // The fresh block is the tab's latest compaction, and every later step opens with it.
      const blocks = log.filter(
        (chunk): chunk is Extract<Chunk, { type: 'compaction' }> => chunk.type === 'compaction',
      );
      expect(blocks).toHaveLength(2);
      const fresh = blocks[1]!.data.block;
      for (const request of requests.slice(index + 2)) {
        const first = (request.body as { messages: { content: unknown[] }[] }).messages[0];
        expect(first?.content[0]).toEqual(fresh);
      }
    }, 60_000);
  }
});

describe('compaction_unavailable (worker, simulator through the SDK)', () => {
  const getHarness = useHarness('memory', (harness) =>
    harness.startWorker({ contextWindowTokens: 3_000 }),
  );

  it('is retried with backoff; the compaction is stored once and the step answers', async (context) => {
    const harness = getHarness(context);
    // A threshold below what the prompt takes: the step compacts first.
    const tab = await harness.newTab({ system, compaction: { threshold: 0.1 } });
    const marker = `unavailable-${randomUUID()}`;
    const question = 'Tell me about the sky over the harbour. '.repeat(40);
    await harness.send(
      tab.id,
      `${marker} ${question} [[sim: context-window 3000]] [[sim: compaction-unavailable times=2]] [[sim: words 5]]`,
    );
    await harness.turnsDone(tab.id, 1, 30_000);

    const reasons = (harness.events.get(tab.id) ?? []).flatMap((event) =>
      event.event === 'turn-done' ? [event.data.reason] : [],
    );
    expect(reasons).toEqual(['completed']);
    const compactionRequests = harness
      .requestsMentioning(marker)
      .filter((request) => (request.body as { compaction?: unknown }).compaction !== undefined);
    expect(compactionRequests.map((request) => request.status)).toEqual([529, 529, 200]);
    const log = await harness.store.readAll(tab.id);
    expect(log.map((chunk) => `${chunk.role}/${chunk.type}`)).toEqual([
      'user/text',
      'assistant/compaction',
      'assistant/text',
    ]);
  }, 60_000);
});
