import type {
  BetaMessage,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  buildCompactionRequest,
  buildRequest,
  type Chunk,
  type ChunkBody,
  COMPACTION_BETA,
  compactionDataFromResponse,
  type RequestOptions,
  type WireRequest,
} from '@chunklog/chunk-core';
import { TEST_TAB_ID, testUuid } from '@chunklog/chunk-core/testing';
import { describe, expect, it } from 'vitest';
/*
 * A tab driven the way a worker will drive it, with chunk-core and the simulator through the
 * SDK: one user message and one answer per turn, a compaction before any step whose request
 * would pass 70% of a small window (estimated from the previous response's input figures plus
 * the chunks added since), and only the log from the latest compaction in memory.
 */
import { sharedPromptTokens } from './prompt-cache/shared-prompt-tokens';
import { useSimulatorClient } from './testing/simulator-client';

const contextWindowTokens = 5_000;
/** Compact before a step whose request would pass this share of the window. */
const threshold = 0.7;
const turns = 200;

const sim = useSimulatorClient({ contextWindowTokens });

// A system prompt above the 1,024-token cache minimum, as real agents have, so the cache figures
// measure the builder rather than the minimum.
const options: RequestOptions = {
  model: 'claude-sonnet-4-6',
  maxTokens: 512,
  system: `You answer questions about the weather. ${'Be precise, brief and kind. '.repeat(180)}`,
};

/** A tab's log, written as a worker writes it: one turn per user message. */
class Tab {
  readonly chunks: Chunk[] = [];
  private latestCompaction = 0;

  write(body: ChunkBody, turn: number): void {
    const seq = this.chunks.length + 1;
    this.chunks.push({
      id: testUuid(seq),
      tabId: TEST_TAB_ID,
      seq,
      turnId: testUuid(1_000_000 + turn),
      step: 0,
      createdAt: seq,
      ...body,
    } as Chunk);
    if (body.type === 'compaction') this.latestCompaction = seq - 1;
  }

  /** What a worker keeps in memory: the log from its latest compaction on. */
  tail(): Chunk[] {
    return this.chunks.slice(this.latestCompaction);
  }
}

/** The input tokens a response reports: uncached, read from the cache and written to it. */
function inputTokens(message: BetaMessage): number {
  const usage = message.usage;
  return (
    usage.input_tokens +
    (usage.cache_read_input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0)
  );
}

describe('a tab that outlives the context window', () => {
  it('keeps answering for 200 turns, compacting, with no cache miss but the compactions’ own', async () => {
    const tab = new Tab();
    type Sent = { id: string; body: unknown; inputTokens: number; seq: number };
    let previous = undefined as Sent | undefined;
    const figures = { read: 0, total: 0, ideal: 0, compactions: 0 };
    const missReasons: { turn: number; afterCompaction: boolean; type: string }[] = [];

    async function send(request: WireRequest): Promise<BetaMessage> {
      const body = {
        ...(request as MessageCreateParamsNonStreaming),
        diagnostics: { previous_message_id: previous?.id ?? null },
      };
      const message = await sim.client.beta.messages.create({ ...body, betas: [COMPACTION_BETA] });
      // The most any cache could read: what the previous request sent in the same place.
      figures.ideal += sharedPromptTokens(previous?.body, body);
      figures.read += message.usage.cache_read_input_tokens ?? 0;
      figures.total += inputTokens(message);
      previous = {
        id: message.id,
        body,
        inputTokens: inputTokens(message),
        seq: tab.chunks.length,
      };
      return message;
    }

    for (let turn = 0; turn < turns; turn += 1) {
      tab.write(
        {
          type: 'text',
          role: 'user',
          data: { text: `Turn ${turn}: how is the weather in city ${turn}? [[sim: words 40]]` },
        },
        turn,
      );
      // The figures of the previous request, plus an estimate for the chunks added since.
      const added = tab.chunks.slice(previous?.seq ?? 0);
      const estimate = (previous?.inputTokens ?? 0) + Math.ceil(JSON.stringify(added).length / 4);
      let compacted = false;
      if (estimate > threshold * contextWindowTokens) {
        const compaction = buildCompactionRequest({ ...options, chunks: tab.tail() });
        if (compaction !== undefined) {
          const answer = await send(compaction.request);
          const data = compactionDataFromResponse(answer, compaction.throughSeq);
          if (data === undefined) throw new Error('no compaction block');
          tab.write({ type: 'compaction', role: 'assistant', data }, turn);
          figures.compactions += 1;
          compacted = true;
        }
      }
      const answer = await send(buildRequest({ ...options, chunks: tab.tail() }));
      const reason = answer.diagnostics?.cache_miss_reason;
      if (reason) missReasons.push({ turn, afterCompaction: compacted, type: reason.type });
      expect(answer.stop_reason).toBe('end_turn');
      const text = answer.content.find((block) => block.type === 'text');
      tab.write({ type: 'text', role: 'assistant', data: { text: text?.text ?? '' } }, turn);
    }

    const share = figures.read / figures.total;
    const ofIdeal = figures.read / figures.ideal;
    console.log(
      `long tab: ${turns} turns, ${figures.compactions} compactions, cache read share ${share.toFixed(3)}, of ideal ${ofIdeal.toFixed(3)}`,
    );
    expect(figures.compactions).toBeGreaterThan(5);
    expect(tab.chunks.filter((chunk) => chunk.type === 'text')).toHaveLength(2 * turns);
    expect(tab.chunks.map((chunk) => chunk.seq)).toEqual(tab.chunks.map((_, index) => index + 1));
    expect(missReasons.length).toBeGreaterThan(0);
    for (const miss of missReasons)
      expect(miss).toMatchObject({ afterCompaction: true, type: 'messages_changed' });
    expect(ofIdeal).toBeGreaterThanOrEqual(0.95);
  });
});
