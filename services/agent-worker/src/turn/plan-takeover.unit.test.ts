import { randomUUID } from 'node:crypto';
import { validateRequest } from '@chunklog/anthropic-sim';
import type { Chunk, ChunkBody } from '@chunklog/chunk-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildStepRequest } from '../request/step-request';
import { planTakeover, resumePoint } from './takeover';

const tabId = randomUUID();
const turnId = randomUUID();

/** One model step as the worker logs it: text, calls, then their results (any order), maybe an interrupt. */
const stepArbitrary = fc.record({
  text: fc.option(fc.string({ minLength: 1, maxLength: 20 }).filter((text) => text.trim() !== '')),
  calls: fc.integer({ min: 0, max: 3 }),
  resultOrder: fc.func(fc.integer()),
  interrupt: fc.option(fc.constant('also this')),
});

type Step = {
  text: string | null;
  calls: number;
  resultOrder: (callId: string) => number;
  interrupt: string | null;
};

function turnLog(steps: Step[]): Chunk[] {
  const bodies: (ChunkBody & { step: number })[] = [
    { step: 0, role: 'user', type: 'text', data: { text: 'go' } },
  ];
  let callNumber = 0;
  steps.forEach((step, index) => {
    if (step.text !== null)
      bodies.push({ step: index, role: 'assistant', type: 'text', data: { text: step.text } });
    const callIds = Array.from({ length: step.calls }, () => `toolu_${callNumber++}`);
    for (const callId of callIds) {
      bodies.push({
        step: index,
        role: 'assistant',
        type: 'tool_call',
        data: { callId, name: 'echo', arguments: {} },
      });
    }
    const ordered = [...callIds].sort((a, b) => step.resultOrder(a) - step.resultOrder(b));
    for (const callId of ordered) {
      bodies.push({
        step: index,
        role: 'tool',
        type: 'tool_result',
        data: { callId, name: 'echo', result: 'ok', isError: false },
      });
    }
    if (step.interrupt !== null) {
      bodies.push({ step: index, role: 'user', type: 'text', data: { text: step.interrupt } });
    }
  });
  return bodies.map(
    (body, index) =>
      ({ ...body, id: randomUUID(), tabId, turnId, seq: index + 1, createdAt: 0 }) as Chunk,
  );
}

function asChunks(
  log: readonly Chunk[],
  appended: ReturnType<typeof planTakeover>['append'],
): Chunk[] {
  return [
    ...log,
    ...appended.map(
      (body, index) => ({ ...body, tabId, seq: log.length + index + 1, createdAt: 0 }) as Chunk,
    ),
  ];
}

const defaults = { model: 'claude-sonnet-4-6', maxTokens: 1024 };

describe('planTakeover', () => {
  it('repairs a turn cut at any point so that the next request is valid', () => {
    fc.assert(
      fc.property(
        fc.array(stepArbitrary, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        (steps, cutSeed) => {
          const full = turnLog(steps);
          const log = full.slice(0, 1 + (cutSeed % full.length));
          const plan = planTakeover({
            log,
            turnId,
            previousOwner: 'dead',
            workerId: 'alive',
            newId: randomUUID,
          });
          const repaired = asChunks(log, plan.append);

          // Every call has exactly one result afterwards, and the notice comes last.
          const calls = repaired.filter((chunk) => chunk.type === 'tool_call').length;
          expect(repaired.filter((chunk) => chunk.type === 'tool_result')).toHaveLength(calls);
          expect(plan.append.at(-1)).toMatchObject({
            role: 'system',
            type: 'system',
            data: { kind: 'takeover' },
          });

          // Resuming happens exactly when the model owes an answer, and then the request is valid.
          const lastContent = repaired.filter((chunk) => chunk.type !== 'system').at(-1)!;
          expect(plan.resumeStep === null).toBe(lastContent.role === 'assistant');
          const next =
            plan.resumeStep === null
              ? [
                  ...repaired,
                  {
                    ...repaired[0]!,
                    id: randomUUID(),
                    seq: repaired.length + 1,
                    turnId: randomUUID(),
                  },
                ]
              : repaired;
          const request = buildStepRequest({ log: next, config: {}, defaults, tools: [] });
          expect(validateRequest(request)).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('resumes after the last assistant step, or at step 0 when the model never answered', () => {
    const log = turnLog([{ text: 'hi', calls: 1, resultOrder: () => 0, interrupt: null }]);
    expect(resumePoint(log, turnId)).toBe(1);
    expect(resumePoint(log.slice(0, 1), turnId)).toBe(0);
    expect(resumePoint(log.slice(0, 2), turnId)).toBeNull();
  });

  it('looks past a compaction the dead worker stored before a step: the model still owes it', () => {
    const log = turnLog([{ text: 'hi', calls: 1, resultOrder: () => 0, interrupt: null }]);
    const compaction = {
      ...log[0]!,
      id: randomUUID(),
      seq: log.length + 1,
      step: 1,
      role: 'assistant',
      type: 'compaction',
      data: {
        block: { type: 'compaction', content: 'summary', encrypted_content: null },
        throughSeq: 1,
      },
    } as Chunk;
    expect(resumePoint([...log, compaction], turnId)).toBe(1);
    expect(resumePoint([log[0]!, { ...compaction, step: 0 }], turnId)).toBe(0);
  });
});
