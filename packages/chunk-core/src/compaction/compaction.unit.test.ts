import { validateRequest } from '@chunklog/anthropic-sim';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Chunk } from '../schemas/chunk';
import { ChunkSchema } from '../schemas/chunk';
import { LiveEventSchema } from '../schemas/events';
import {
  arbitraryChaoticLog,
  arbitraryCompactionPlan,
  ChunkLogWriter,
  fakeCompactionBlock,
  insertCompactions,
} from '../testing';
import { buildRequest, type RequestOptions, stripCacheControl } from '../wire/build-request';
import { buildMessages, MessageFold } from '../wire/message-fold';
import { buildCompactionRequest, findCompactionCut } from './build-compaction-request';
import { type CompactionBlock, compactionDataFromResponse } from './compaction';

const options: RequestOptions = { model: 'claude-test', maxTokens: 4096 };
const withThinking: RequestOptions = { ...options, thinking: { budgetTokens: 1024 } };

const block: CompactionBlock = {
  type: 'compaction',
  content: 'The user asked about Paris; it was sunny.',
  encrypted_content: 'opaque',
  signature: 'signed',
  tool_changes: [],
};

function compact(log: ChunkLogWriter, throughSeq: number, compaction = block): Chunk {
  return log.write({
    type: 'compaction',
    role: 'assistant',
    data: { block: compaction, throughSeq },
  });
}

const compactionMessage = { role: 'assistant', content: [block] };

describe('the compaction chunk', () => {
  it('is a chunk like any other: schema, chunk-open and chunk-seal events', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('hi');
    const chunk = compact(log, 1);
    expect(ChunkSchema.parse(chunk)).toEqual(chunk);
    const { tabId, id, turnId, step } = chunk;
    expect(
      LiveEventSchema.safeParse({
        event: 'chunk-open',
        data: { tabId, id, turnId, step, role: 'assistant', type: 'compaction' },
      }).success,
    ).toBe(true);
    expect(LiveEventSchema.parse({ event: 'chunk-seal', data: { tabId, chunk } })).toEqual({
      event: 'chunk-seal',
      data: { tabId, chunk },
    });
  });

  it('keeps fields the API may add to the block, and refuses a block without content', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    const chunk = compact(log, 0, { ...block, future_field: { kept: true } });
    expect(ChunkSchema.parse(chunk)).toMatchObject({
      data: { block: { future_field: { kept: true } } },
    });
    const failed = compact(log, 0, { ...block, content: null } as unknown as CompactionBlock);
    expect(ChunkSchema.safeParse(failed).success).toBe(false);
    const wrongRole = { ...chunk, role: 'user' };
    expect(ChunkSchema.safeParse(wrongRole).success).toBe(false);
  });
});

describe('MessageFold with compactions', () => {
  it('starts from the latest compaction: its block first, then the chunks after its cut', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('Weather in Paris?');
    log.assistantText('Sunny.');
    log.startTurn();
    log.userText('And Rome?'); // seq 3, appended while the compaction of seqs 1-2 ran
    compact(log, 2);
    log.assistantText('Rainy.');
    expect(buildMessages(log.chunks)).toEqual([
      compactionMessage,
      { role: 'user', content: [{ type: 'text', text: 'And Rome?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Rainy.' }] },
    ]);
  });

  it('sends the block alone when nothing follows its cut, and the API takes it as it is', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('hi');
    compact(log, 1);
    const request = buildRequest({ ...withThinking, chunks: log.chunks });
    expect(request.messages).toEqual([compactionMessage]);
    expect(request.thinking).toBeDefined();
    expect(validateRequest(request)).toEqual([]);
  });

  it('keeps signed thinking of a step that follows the compaction, and thinking on', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('Look it up.');
    compact(log, 1);
    log.thinking('Need the tool.', 'sig-a');
    log.toolCall('toolu_1');
    log.toolResult('toolu_1', 'found');
    const request = buildRequest({ ...withThinking, chunks: log.chunks });
    expect(request.messages[1]?.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Need the tool.',
      signature: 'sig-a',
    });
    expect(request.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(validateRequest(request)).toEqual([]);
  });

  it('writes the block with its fields in one order, whatever order the store gave back', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('hi');
    compact(log, 1, {
      tool_changes: [],
      signature: 'signed',
      encrypted_content: 'opaque',
      content: 'The user asked about Paris; it was sunny.',
      type: 'compaction',
    });
    expect(JSON.stringify(buildMessages(log.chunks)[0])).toBe(JSON.stringify(compactionMessage));
  });

  it('folds incrementally to exactly what a full build gives', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryCompactionPlan, async (plan) => {
        const chunks = await insertCompactions(plan, options, fakeCompactionBlock);
        const fold = new MessageFold();
        chunks.forEach((chunk, index) => {
          fold.append(chunk);
          expect(fold.messages()).toEqual(buildMessages(chunks.slice(0, index + 1)));
        });
      }),
      { numRuns: 150 },
    );
  });
});

describe('compaction property: any worker-shaped log with any compactions', () => {
  it('builds a request the API accepts, with and without thinking', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryCompactionPlan, fc.boolean(), async (plan, thinking) => {
        const requestOptions = thinking ? withThinking : options;
        const chunks = await insertCompactions(plan, requestOptions, fakeCompactionBlock);
        for (let end = 1; end <= chunks.length; end += 1) {
          const request = buildRequest({ ...requestOptions, chunks: chunks.slice(0, end) });
          expect(validateRequest(request)).toEqual([]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('stays total when compactions sit anywhere in a chaotic log, covering any seq', () => {
    const chaotic = fc
      .tuple(arbitraryChaoticLog, fc.array(fc.tuple(fc.nat(30), fc.nat(40)), { maxLength: 3 }))
      .map(([log, compactions]) => {
        const chunks: Chunk[] = [...log];
        for (const [at, throughSeq] of compactions) {
          const position = Math.min(at, chunks.length);
          const neighbour = chunks[position] ?? chunks[0] ?? log[0];
          if (neighbour === undefined) continue;
          chunks.splice(position, 0, {
            ...neighbour,
            type: 'compaction',
            role: 'assistant',
            data: { block: { ...block, content: `Summary through ${throughSeq}.` }, throughSeq },
          });
        }
        return chunks.map((chunk, index) => ({ ...chunk, seq: index + 1 }));
      });
    fc.assert(
      fc.property(chaotic, fc.boolean(), (chunks, thinking) => {
        const requestOptions = thinking ? withThinking : options;
        expect(validateRequest(buildRequest({ ...requestOptions, chunks }))).toEqual([]);
        const compaction = buildCompactionRequest({ ...requestOptions, chunks });
        if (compaction !== undefined) expect(validateRequest(compaction.request)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('builds compaction requests that no compaction refusal applies to', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryCompactionPlan, async (plan) => {
        await insertCompactions(plan, withThinking, (compaction) => {
          expect(validateRequest(compaction.request)).toEqual([]);
          expect(compaction.request.compaction).toEqual({ type: 'summarize' });
          expect(compaction.request.messages.at(-1)?.role).toBe('user');
          return fakeCompactionBlock(compaction);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('never changes the bytes before the open step when the log grows after a compaction', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryCompactionPlan, async (plan) => {
        const chunks = await insertCompactions(plan, options, fakeCompactionBlock);
        const fold = new MessageFold();
        let settled: string[] = [];
        for (const chunk of chunks) {
          fold.append(chunk);
          const messages = fold.messages().map((message) => JSON.stringify(message));
          if (chunk.type !== 'compaction') {
            expect(messages.slice(0, settled.length)).toEqual(settled);
          }
          settled = messages.slice(0, fold.settledMessageCount());
        }
      }),
      { numRuns: 200 },
    );
  });

  it('never splits a step: a tool call and its results, a step’s blocks, stay on one side of a cut', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryCompactionPlan, async (plan) => {
        const chunks = await insertCompactions(plan, options, fakeCompactionBlock);
        const stepOf = (chunk: Chunk) => `${chunk.turnId}/${chunk.step}`;
        for (const compaction of chunks) {
          if (compaction.type !== 'compaction') continue;
          const cut = compaction.data.throughSeq;
          const before = chunks.filter((chunk) => chunk.seq <= cut);
          const after = chunks.filter((chunk) => chunk.seq > cut && chunk.type !== 'compaction');
          const unanswered = new Set(
            before.flatMap((chunk) =>
              chunk.type === 'tool_call' ? [`${stepOf(chunk)}/${chunk.data.callId}`] : [],
            ),
          );
          for (const chunk of before) {
            if (chunk.type === 'tool_result') {
              unanswered.delete(`${stepOf(chunk)}/${chunk.data.callId}`);
            }
          }
          const assistantSteps = new Set(
            before.flatMap((chunk) => (isAssistantContent(chunk) ? [stepOf(chunk)] : [])),
          );
          for (const chunk of after) {
            if (chunk.type === 'tool_result') {
              expect(unanswered.has(`${stepOf(chunk)}/${chunk.data.callId}`)).toBe(false);
            }
            if (isAssistantContent(chunk)) expect(assistantSteps.has(stepOf(chunk))).toBe(false);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

function isAssistantContent(chunk: Chunk): boolean {
  return (
    chunk.type === 'thinking' ||
    chunk.type === 'tool_call' ||
    (chunk.type === 'text' && chunk.role === 'assistant')
  );
}

describe('findCompactionCut and buildCompactionRequest', () => {
  it('cuts after the last finished step and leaves a step still running after the cut', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('Find it.'); // 1
    log.toolCall('toolu_1'); // 2
    log.toolResult('toolu_1', 'here'); // 3
    log.step = 1;
    log.assistantText('Found it'); // 4: step 1 still streaming when the compaction starts
    expect(findCompactionCut(log.chunks)).toBe(3);
    log.step = 2;
    log.toolCall('toolu_2'); // 5: no result yet
    expect(findCompactionCut(log.chunks)).toBe(3);
  });

  it('keeps a step that a compaction landed in the middle of whole after the next cut', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('Look up two things.'); // 1
    log.step = 1;
    log.toolCall('toolu_a'); // 2: the step was running when a compaction of seq 1 started
    compact(log, 1); // 3
    log.toolCall('toolu_b'); // 4
    log.toolResult('toolu_b', 'b'); // 5: toolu_a still has no result
    expect(findCompactionCut(log.chunks)).toBeUndefined();
    log.toolResult('toolu_a', 'a'); // 6
    expect(findCompactionCut(log.chunks)).toBe(6);
  });

  it('has nothing to summarize in an empty log or right after a compaction', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    expect(buildCompactionRequest({ ...options, chunks: log.chunks })).toBeUndefined();
    log.userText('hi');
    compact(log, 1);
    expect(buildCompactionRequest({ ...options, chunks: log.chunks })).toBeUndefined();
    log.notice('worker restarted');
    expect(buildCompactionRequest({ ...options, chunks: log.chunks })).toBeUndefined();
  });

  it('is the step request up to the cut with the compaction parameter and its instructions', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('hi');
    log.assistantText('Hello.');
    log.startTurn();
    log.userText('More?');
    const built = buildCompactionRequest({
      ...options,
      system: 'Be brief.',
      chunks: log.chunks,
      instructions: 'Keep names.',
    });
    expect(built?.throughSeq).toBe(3);
    const { compaction, ...rest } = built?.request ?? {};
    expect(compaction).toEqual({ type: 'summarize', instructions: 'Keep names.' });
    expect(rest).toEqual(buildRequest({ ...options, system: 'Be brief.', chunks: log.chunks }));
  });

  it('turns an API answer into compaction chunk data, and a failed compaction into nothing', () => {
    expect(compactionDataFromResponse({ content: [block] }, 7)).toEqual({
      block,
      throughSeq: 7,
    });
    const failed = { type: 'compaction', content: null, encrypted_content: null };
    expect(compactionDataFromResponse({ content: [failed] }, 7)).toBeUndefined();
  });
});

describe('validateRequest compaction rules', () => {
  const user = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
  const assistant = { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] };
  const opening = { role: 'assistant', content: [block] };
  const codes = (request: object, validateOptions = {}) =>
    validateRequest({ model: 'claude-test', max_tokens: 100, ...request }, validateOptions).map(
      (violation) => violation.code ?? violation.message,
    );

  it('accepts the block first, alone or followed by either role', () => {
    expect(codes({ messages: [opening] })).toEqual([]);
    expect(codes({ messages: [opening, user] })).toEqual([]);
    expect(codes({ messages: [opening, assistant, user] })).toEqual([]);
  });

  it('refuses a misplaced block, two blocks with content, and a block in the system prompt', () => {
    expect(codes({ messages: [user, opening, user] })).toEqual(['compaction_block_misplaced']);
    expect(
      codes({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, block] }] }),
    ).toEqual(['compaction_block_misplaced']);
    expect(codes({ messages: [opening, user, opening, user] })).toEqual([
      'compaction_block_ambiguous',
    ]);
    expect(codes({ system: [block], messages: [user] })).toEqual(['compaction_block_misplaced']);
  });

  it('treats a block without content as a no-op, and refuses a request of only such blocks', () => {
    const noOp = { type: 'compaction', content: null, encrypted_content: null };
    expect(
      codes({ messages: [user, { role: 'assistant', content: [noOp, ...assistant.content] }] }),
    ).toEqual([]);
    expect(codes({ messages: [{ role: 'user', content: [noOp] }] })).toEqual([
      'compaction_nothing_to_summarize',
    ]);
  });

  it('refuses a compaction request that ends on an unfinished assistant turn', () => {
    const compaction = { type: 'summarize' };
    expect(codes({ compaction, messages: [user, assistant] })).toEqual([
      'compaction_incomplete_turn',
    ]);
    expect(codes({ compaction, messages: [user, assistant, user] })).toEqual([]);
    expect(codes({ compaction, messages: [opening] })).toEqual([]);
  });

  it('refuses the parameters a compaction request cannot carry', () => {
    const compaction = { type: 'summarize' };
    expect(codes({ compaction, stop_sequences: ['x'], messages: [user] })).toEqual([
      '`compaction` cannot be combined with `stop_sequences`',
    ]);
  });

  it('knows neither the parameter nor the block without the beta', () => {
    const withoutBeta = { compactionBeta: false };
    expect(codes({ compaction: { type: 'summarize' }, messages: [user] }, withoutBeta)).toEqual([
      'Extra inputs are not permitted',
    ]);
    expect(codes({ messages: [opening, user] }, withoutBeta)).toContainEqual(
      expect.stringMatching(/^Input tag 'compaction' found using 'type' does not match/),
    );
  });

  it('ignores breakpoints when comparing a compacted request with its unmarked messages', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('hi');
    compact(log, 1);
    log.startTurn();
    log.userText('next');
    const request = buildRequest({ ...options, chunks: log.chunks });
    expect(stripCacheControl(request.messages)).toEqual(buildMessages(log.chunks));
  });
});
