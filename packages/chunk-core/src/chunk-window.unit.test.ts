import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkWindow } from './chunk-window';
import type { Chunk, ChunkPage } from './schemas/chunk';
import type { LiveEvent } from './schemas/events';
import {
  arbitraryChunkLog,
  ChunkLogWriter,
  TEST_TAB_ID,
  testUuid,
} from './testing/arbitrary-chunk-log';

/** What GET /v1/tabs/:tabId/chunks?before&limit answers for a log. */
function serverPage(log: readonly Chunk[], before: number | undefined, limit: number): ChunkPage {
  const eligible = before === undefined ? log : log.filter((chunk) => chunk.seq < before);
  const chunks = eligible.slice(-limit);
  return { chunks, total: log.length, hasMore: eligible.length > chunks.length };
}

const seal = (chunk: Chunk): LiveEvent => ({
  event: 'chunk-seal',
  data: { tabId: TEST_TAB_ID, chunk },
});
const turnStart = (turnId: string): LiveEvent => ({
  event: 'turn-start',
  data: { tabId: TEST_TAB_ID, turnId },
});
const turnDone = (turnId: string): LiveEvent => ({
  event: 'turn-done',
  data: {
    tabId: TEST_TAB_ID,
    turnId,
    reason: 'completed',
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    },
  },
});

function seqs(window: ChunkWindow): number[] {
  return window.chunks().map((chunk) => chunk.seq);
}

/** A finished turn of `size` chunks: a user text, then assistant texts. */
function writeTurn(log: ChunkLogWriter, size: number): void {
  log.startTurn();
  log.userText('question');
  for (let index = 1; index < size; index += 1) log.assistantText(`part ${index}`);
}

describe('ChunkWindow live events', () => {
  it('streams an open block by offset and replaces it with its seal', () => {
    const window = new ChunkWindow({ limit: 100 });
    const id = testUuid(77);
    const turnId = testUuid(1_000_001);
    window.applyEvent(turnStart(turnId));
    window.applyEvent({
      event: 'chunk-open',
      data: { tabId: TEST_TAB_ID, id, turnId, step: 0, role: 'assistant', type: 'text' },
    });
    const delta = (offset: number, text: string): LiveEvent => ({
      event: 'chunk-delta',
      data: { tabId: TEST_TAB_ID, id, offset, text },
    });
    window.applyEvent(delta(0, 'Hel'));
    window.applyEvent(delta(3, 'lo, '));
    window.applyEvent(delta(3, 'lo, ')); // delivered twice
    window.applyEvent(delta(0, 'Hello, wo')); // resume: the whole text so far at offset 0
    window.applyEvent(delta(12, 'skipped')); // beyond a gap: cannot be placed
    window.applyEvent(delta(9, 'rld'));
    expect(window.openBlocks()).toMatchObject([{ id, text: 'Hello, world', open: true }]);
    expect(window.renderGroups().at(-1)?.chunks.at(-1)).toMatchObject({ id, open: true });

    const chunk = {
      id,
      tabId: TEST_TAB_ID,
      seq: 1,
      turnId,
      step: 0,
      role: 'assistant',
      type: 'text',
      data: { text: 'Hello, world!' },
      createdAt: 1,
    } as Chunk;
    window.applyEvent(seal(chunk));
    expect(window.openBlocks()).toEqual([]);
    expect(window.chunk({ id })).toEqual(chunk);
    expect(window.chunk({ seq: 1 })).toEqual(chunk);
    window.applyEvent(seal(chunk));
    expect(seqs(window)).toEqual([1]);
  });

  it('forgets a block of the turn that another block of the turn opens after', () => {
    const window = new ChunkWindow({ limit: 100 });
    const turnId = testUuid(1_000_002);
    const otherTurnId = testUuid(1_000_003);
    const open = (id: string, turn: string, step: number): LiveEvent => ({
      event: 'chunk-open',
      data: { tabId: TEST_TAB_ID, id, turnId: turn, step, role: 'assistant', type: 'thinking' },
    });
    window.applyEvent(open(testUuid(6), otherTurnId, 0));
    // Thinking cut by an interrupting message is dropped: the next step's block opens instead.
    window.applyEvent(open(testUuid(7), turnId, 0));
    window.applyEvent(open(testUuid(8), turnId, 1));
    expect(window.openBlocks().map((block) => block.id)).toEqual([testUuid(6), testUuid(8)]);
  });

  it('forgets a block still open when its turn ends', () => {
    const window = new ChunkWindow({ limit: 100 });
    const turnId = testUuid(1_000_001);
    window.applyEvent({
      event: 'chunk-open',
      data: {
        tabId: TEST_TAB_ID,
        id: testUuid(5),
        turnId,
        step: 1,
        role: 'assistant',
        type: 'thinking',
      },
    });
    expect(window.liveTurnId()).toBe(turnId);
    window.applyEvent(turnDone(turnId));
    expect(window.openBlocks()).toEqual([]);
    expect(window.liveTurnId()).toBeNull();
  });

  it('does not take a seal beyond a gap, and says where to catch up', () => {
    const log = new ChunkLogWriter();
    writeTurn(log, 6);
    const window = new ChunkWindow({ limit: 100 });
    window.applyPage(serverPage(log.chunks.slice(0, 3), undefined, 50));
    window.applyEvent(seal(log.chunks[4] as Chunk));
    expect(seqs(window)).toEqual([1, 2, 3]);
    expect(window.catchUpAfter()).toBe(3);
    window.applyPage({ chunks: log.chunks.slice(3), total: 6, hasMore: false }, 'after');
    expect(seqs(window)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(window.catchUpAfter()).toBeNull();
  });

  it('notifies subscribers of each change', () => {
    const window = new ChunkWindow({ limit: 10 });
    let calls = 0;
    const unsubscribe = window.subscribe(() => {
      calls += 1;
    });
    window.applyEvent(turnStart(testUuid(1)));
    expect(calls).toBe(1);
    expect(window.version).toBe(1);
    unsubscribe();
    window.applyEvent(turnDone(testUuid(1)));
    expect(calls).toBe(1);
  });
});

describe('ChunkWindow eviction', () => {
  it('trims inside a turn, leaving its newest chunks', () => {
    const log = new ChunkLogWriter();
    writeTurn(log, 4);
    writeTurn(log, 10);
    const window = new ChunkWindow({ limit: 6 });
    window.applyPage(serverPage(log.chunks, undefined, 50));
    expect(window.evict()).toBe(8);
    expect(seqs(window)).toEqual([9, 10, 11, 12, 13, 14]);
    // The second turn is cut: its first group starts mid-turn, without the user text.
    const groups = window.renderGroups();
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ role: 'assistant', turnId: log.turnId });
    expect(window.nextPageBefore()).toBe(9);
  });

  it('pins the live turn and open blocks', () => {
    const log = new ChunkLogWriter();
    writeTurn(log, 5);
    const window = new ChunkWindow({ limit: 3 });
    window.applyPage(serverPage(log.chunks, undefined, 50));
    log.startTurn();
    window.applyEvent(turnStart(log.turnId));
    for (let index = 0; index < 6; index += 1) {
      window.applyEvent(seal(log.userText(`live ${index}`)));
    }
    window.applyEvent({
      event: 'chunk-open',
      data: {
        tabId: TEST_TAB_ID,
        id: testUuid(999),
        turnId: log.turnId,
        step: 1,
        role: 'assistant',
        type: 'text',
      },
    });
    // Limit 3, yet the live turn's 6 chunks and its open block stay; the old turn is gone.
    expect(seqs(window)).toEqual([6, 7, 8, 9, 10, 11]);
    expect(window.openBlocks()).toHaveLength(1);
    window.applyEvent(turnDone(log.turnId));
    expect(seqs(window)).toEqual([9, 10, 11]);
  });
});

describe('ChunkWindow render groups', () => {
  it('groups by turn, role and step and pairs tool results with their calls', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('weather?');
    log.thinking('two cities', 'sig');
    const paris = log.toolCall('call_paris');
    const rome = log.toolCall('call_rome');
    const romeResult = log.toolResult('call_rome', 'sunny');
    log.userText('and Oslo?');
    const parisResult = log.toolResult('call_paris', 'rain');
    log.step = 1;
    log.assistantText('Rain in Paris, sun in Rome.');
    log.notice('compacted');
    const window = new ChunkWindow({ limit: 100 });
    window.applyPage(serverPage(log.chunks, undefined, 50));
    const groups = window.renderGroups();
    expect(groups.map((group) => `${group.role}:${group.step}:${group.chunks.length}`)).toEqual([
      'user:0:1',
      'assistant:0:3',
      'user:0:1',
      'assistant:1:1',
      'system:1:1',
    ]);
    expect(groups[1]?.chunks.map((chunk) => chunk.id)).toContain(paris.id);
    expect(groups[1]?.chunks.map((chunk) => chunk.id)).toContain(rome.id);
    expect(groups[1]?.toolResults.call_paris?.id).toBe(parisResult.id);
    expect(groups[1]?.toolResults.call_rome?.id).toBe(romeResult.id);
  });

  it("puts a call's approval request and decision in its group, not in groups of their own", () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('pay');
    log.toolCall('call_pay', 'pay', { amount: 5 });
    const request = log.approvalRequest('call_pay', 'pay', { amount: 5 });
    const window = new ChunkWindow({ limit: 100 });
    window.applyPage(serverPage(log.chunks, undefined, 50));
    let groups = window.renderGroups();
    expect(groups.map((group) => `${group.role}:${group.chunks.length}`)).toEqual([
      'user:1',
      'assistant:1',
    ]);
    expect(groups[1]?.approvals.call_pay).toEqual({ request: { ...request, open: false } });
    log.step = 1;
    const decision = log.approvalDecision('call_pay', 'deny', { reason: 'too much' });
    const result = log.toolResult('call_pay', 'denied: too much', true);
    for (const chunk of [decision, result]) window.applyEvent(seal(chunk));
    groups = window.renderGroups();
    expect(groups).toHaveLength(2);
    expect(groups[1]?.approvals.call_pay).toEqual({
      request: { ...request, open: false },
      decision: { ...decision, open: false },
    });
    expect(groups[1]?.toolResults.call_pay?.id).toBe(result.id);
  });

  it('shows an approval whose call is not held as a system group', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.toolCall('call_1');
    log.approvalRequest('call_1');
    const window = new ChunkWindow({ limit: 100 });
    window.applyPage(serverPage(log.chunks.slice(1), undefined, 50));
    const groups = window.renderGroups();
    expect(groups.map((group) => `${group.role}:${group.chunks[0]?.type}`)).toEqual([
      'system:approval_request',
    ]);
    expect(groups[0]?.approvals).toEqual({});
  });

  it('shows a result whose call is not loaded as its own tool group', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('go');
    log.toolCall('call_1');
    log.toolResult('call_1', 'done');
    const window = new ChunkWindow({ limit: 100 });
    window.applyPage(serverPage(log.chunks, undefined, 1));
    expect(window.renderGroups()).toMatchObject([
      { role: 'tool', chunks: [{ type: 'tool_result' }] },
    ]);
  });
});

describe('ChunkWindow paging', () => {
  type Action =
    | { kind: 'page'; limit: number }
    | { kind: 'live'; count: number }
    | { kind: 'replay'; back: number }
    | { kind: 'evict'; limit: number }
    | { kind: 'turn' };

  const action: fc.Arbitrary<Action> = fc.oneof(
    fc.record({ kind: fc.constant('page' as const), limit: fc.integer({ min: 1, max: 7 }) }),
    fc.record({ kind: fc.constant('live' as const), count: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ kind: fc.constant('replay' as const), back: fc.nat(5) }),
    fc.record({ kind: fc.constant('evict' as const), limit: fc.integer({ min: 1, max: 12 }) }),
    fc.record({ kind: fc.constant('turn' as const) }),
  );

  it('never duplicates or skips a chunk, whatever the interleaving of pages, seals and evictions', () => {
    fc.assert(
      fc.property(
        arbitraryChunkLog,
        fc.nat(),
        fc.integer({ min: 2, max: 15 }),
        fc.array(action, { maxLength: 30 }),
        (log, split, limit, actions) => {
          const window = new ChunkWindow({ limit });
          let published = split % (log.length + 1);
          const check = () => {
            const held = seqs(window);
            held.forEach((seq, index) => {
              if (index > 0) expect(seq).toBe((held[index - 1] as number) + 1);
              expect(window.chunk({ seq })).toEqual(log[seq - 1]);
            });
            expect(new Set(window.chunks().map((chunk) => chunk.id)).size).toBe(held.length);
          };
          for (const step of actions) {
            switch (step.kind) {
              case 'page': {
                const before = window.nextPageBefore();
                if (before !== null) {
                  window.applyPage(serverPage(log.slice(0, published), before, step.limit));
                }
                break;
              }
              case 'live':
                for (let count = 0; count < step.count && published < log.length; count += 1) {
                  window.applyEvent(seal(log[published] as Chunk));
                  published += 1;
                }
                break;
              case 'replay': {
                const again = log[published - 1 - step.back];
                if (again !== undefined) window.applyEvent(seal(again));
                break;
              }
              case 'evict':
                window.evict(step.limit);
                break;
              case 'turn': {
                const next = log[published];
                if (next !== undefined) window.applyEvent(turnStart(next.turnId));
                break;
              }
            }
            check();
          }
          // Resuming the stream after the newest seq held (as a reconnect does), then scrolling
          // all the way up, gives back exactly the published log.
          for (let guard = 0; guard <= log.length + 1; guard += 1) {
            const after = window.newestLoadedSeq() ?? 0;
            const rest = log.slice(after, Math.min(published, after + 3));
            if (rest.length === 0) break;
            window.applyPage({ chunks: rest, total: published, hasMore: true }, 'after');
          }
          for (let guard = 0; guard <= log.length + 1; guard += 1) {
            const before = window.nextPageBefore();
            if (before === null) break;
            window.applyPage(serverPage(log.slice(0, published), before, 3));
          }
          check();
          const newest = window.newestLoadedSeq() ?? 0;
          expect(newest).toBe(published);
          expect(window.catchUpAfter()).toBeNull();
          expect(seqs(window)).toEqual(Array.from({ length: newest }, (_, index) => index + 1));
          expect(window.nextPageBefore()).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });
});
