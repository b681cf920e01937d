import { validateRequest } from '@chunklog/anthropic-sim';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../errors/errors';
import type { Chunk } from '../schemas/chunk';
import { arbitraryChunkLog, ChunkLogWriter } from '../testing/arbitrary-chunk-log';
import {
  assembleRequest,
  buildRequest,
  CACHE_BREAKPOINT,
  stripCacheControl,
} from './build-request';
import { buildMessages, MessageFold } from './message-fold';
import type { WireRequest, WireTool } from './wire-types';

const tools: WireTool[] = [
  { name: 'read_file', description: 'Reads a file', input_schema: { type: 'object' } },
  { name: 'run_shell', description: 'Runs a command', input_schema: { type: 'object' } },
];
const options = {
  model: 'claude-test',
  maxTokens: 8192,
  system: 'You are a careful agent.',
  tools,
};

/** Paths (`messages.3.content.1`, `tools.1`, `system.0`) of every block carrying a breakpoint. */
function breakpointPaths(request: WireRequest): string[] {
  const paths: string[] = [];
  request.tools?.forEach((tool, index) => {
    if (tool.cache_control !== undefined) paths.push(`tools.${index}`);
  });
  request.system?.forEach((block, index) => {
    if (block.cache_control !== undefined) paths.push(`system.${index}`);
  });
  request.messages.forEach((message, messageIndex) => {
    message.content.forEach((block, blockIndex) => {
      if ('cache_control' in block && block.cache_control !== undefined) {
        paths.push(`messages.${messageIndex}.content.${blockIndex}`);
      }
    });
  });
  return paths;
}

/** A sequential 3-step turn, written up to the end of `steps` steps (results included). */
function threeStepTurn(steps: number): Chunk[] {
  const log = new ChunkLogWriter();
  log.startTurn();
  log.userText('Find the bug in main.ts and fix it.');
  const plan = [
    {
      thought: 'Read the file first.',
      call: 'toolu_read',
      name: 'read_file',
      result: 'const x = 1',
    },
    { thought: '', call: 'toolu_test', name: 'run_shell', result: '1 failing' },
    { thought: 'The test expects 2.', call: 'toolu_fix', name: 'run_shell', result: 'patched' },
  ];
  plan.slice(0, steps).forEach((entry, step) => {
    log.step = step;
    log.thinking(entry.thought, `signature-${step}`);
    log.assistantText(`Step ${step}: working.`);
    log.toolCall(entry.call, entry.name, { step });
    log.toolResult(entry.call, entry.result);
  });
  return log.chunks;
}

describe('buildRequest', () => {
  it('keeps the step-0 and step-1 messages byte-identical between the step-2 and step-3 builds', () => {
    const forStep2 = buildRequest({ ...options, chunks: threeStepTurn(2) });
    const forStep3 = buildRequest({ ...options, chunks: threeStepTurn(3) });
    // user, step 0 (assistant + results), step 1 (assistant + results)
    const stableCount = 5;
    expect(forStep2.messages).toHaveLength(stableCount);
    expect(forStep3.messages).toHaveLength(stableCount + 2);
    const unmarked2 = buildMessages(threeStepTurn(2));
    const unmarked3 = buildMessages(threeStepTurn(3));
    expect(unmarked3.slice(0, stableCount).map((message) => JSON.stringify(message))).toEqual(
      unmarked2.map((message) => JSON.stringify(message)),
    );
    // In the requests themselves only the rolling breakpoint moves.
    expect(JSON.stringify(stripCacheControl(forStep3.messages.slice(0, stableCount)))).toBe(
      JSON.stringify(stripCacheControl(forStep2.messages)),
    );
    expect(validateRequest(forStep2)).toEqual([]);
    expect(validateRequest(forStep3)).toEqual([]);
  });

  it('places at most 4 breakpoints: last tool, system, and the last two user messages', () => {
    const request = buildRequest({ ...options, chunks: threeStepTurn(3) });
    expect(breakpointPaths(request)).toEqual([
      'tools.1',
      'system.0',
      'messages.4.content.0',
      'messages.6.content.0',
    ]);
    expect(request.messages[6]?.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_fix',
      content: 'patched',
      cache_control: CACHE_BREAKPOINT,
    });
    expect(tools[1]).not.toHaveProperty('cache_control');
  });

  it('grows the cached prefix: each request reads at the point the previous one wrote', () => {
    // Step boundaries of a turn, then the next turn's message.
    const builds = [1, 2, 3].map((steps) =>
      buildRequest({ ...options, chunks: threeStepTurn(steps) }),
    );
    const nextTurn = new ChunkLogWriter();
    const firstTurn = threeStepTurn(3);
    nextTurn.chunks.push(...firstTurn);
    nextTurn.turnId = firstTurn[0]?.turnId ?? nextTurn.turnId;
    nextTurn.step = 3;
    nextTurn.assistantText('Fixed.');
    nextTurn.startTurn();
    nextTurn.userText('Thanks! Now add a test.');
    builds.push(buildRequest({ ...options, chunks: nextTurn.chunks }));
    for (let index = 1; index < builds.length; index += 1) {
      const previous = breakpointPaths(builds[index - 1] as WireRequest);
      const current = breakpointPaths(builds[index] as WireRequest);
      const written = previous.at(-1);
      // The previous write point is a read point now, and the new write point lies beyond it.
      expect(current).toContain(written);
      expect(current.at(-1)).not.toBe(written);
      const writtenMessage = Number(written?.split('.')[1]);
      const newMessage = Number(current.at(-1)?.split('.')[1]);
      expect(newMessage).toBeGreaterThan(writtenMessage);
    }
  });

  it('needs no tools, system or thinking', () => {
    const request = buildRequest({ model: 'm', maxTokens: 100, chunks: threeStepTurn(1) });
    expect(Object.keys(request)).toEqual(['model', 'max_tokens', 'messages']);
    expect(breakpointPaths(request)).toEqual(['messages.0.content.0', 'messages.2.content.0']);
  });

  it('sends thinking when the log allows it and leaves it off when the API would refuse', () => {
    const thinking = { budgetTokens: 2048 };
    const signed = buildRequest({ ...options, thinking, chunks: threeStepTurn(2) });
    expect(signed.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(validateRequest(signed)).toEqual([]);

    // The last step's thinking was cut off before its signature: it is dropped, so the
    // assistant message answered by the final results no longer starts with thinking.
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('go');
    log.thinking('cut of');
    log.toolCall('toolu_1');
    log.toolResult('toolu_1', 'ok');
    const unsigned = buildRequest({ ...options, thinking, chunks: log.chunks });
    expect(unsigned.thinking).toBeUndefined();
    expect(validateRequest(unsigned)).toEqual([]);
    expect(
      validateRequest({ ...unsigned, thinking: { type: 'enabled', budget_tokens: 2048 } }),
    ).not.toEqual([]);
  });

  it('rejects options the API would refuse whatever the log', () => {
    const chunks = threeStepTurn(1);
    expect(() => buildRequest({ ...options, model: '', chunks })).toThrow(InvalidInputError);
    expect(() => buildRequest({ ...options, maxTokens: 0, chunks })).toThrow(InvalidInputError);
    expect(() =>
      buildRequest({ ...options, maxTokens: 2048, thinking: { budgetTokens: 2048 }, chunks }),
    ).toThrow(InvalidInputError);
    expect(() => buildRequest({ ...options, thinking: { budgetTokens: 512 }, chunks })).toThrow(
      InvalidInputError,
    );
    expect(() =>
      buildRequest({
        ...options,
        tools: [{ name: 'bad name', input_schema: { type: 'object' } }],
        chunks,
      }),
    ).toThrow(InvalidInputError);
  });

  it('gives the same request through a fold kept across steps', () => {
    fc.assert(
      fc.property(arbitraryChunkLog, fc.nat(), (chunks, seed) => {
        const cut = seed % (chunks.length + 1);
        const fold = new MessageFold().appendAll(chunks.slice(0, cut));
        fold.messages();
        fold.appendAll(chunks.slice(cut));
        expect(JSON.stringify(assembleRequest(fold.messages(), options))).toBe(
          JSON.stringify(buildRequest({ ...options, chunks })),
        );
      }),
      { numRuns: 100 },
    );
  });
});
