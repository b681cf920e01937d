import type { Chunk } from '@chunklog/chunk-core';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../resume-filter';
import { type AnswerStart, answerStep, initialAnswerState } from './answer-parts';
import { chunksToUIMessages } from './chunks-to-ui-messages';

const tabId = '00000000-0000-4000-8000-00000000000a';
const turnId = '00000000-0000-4000-8000-00000000000b';
const otherTurnId = '00000000-0000-4000-8000-00000000000c';
const userChunkId = '00000000-0000-4000-8000-000000000100';

type Body = Pick<Chunk, 'type' | 'role' | 'data'>;
let nextSeq = 1;

function chunk(body: Body, options: { step?: number; turn?: string; id?: string } = {}): Chunk {
  const seq = nextSeq++;
  return {
    id: options.id ?? `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    tabId,
    seq,
    turnId: options.turn ?? turnId,
    step: options.step ?? 0,
    createdAt: 0,
    ...body,
  } as Chunk;
}

const user = (text: string, options?: { id?: string; turn?: string }) =>
  chunk({ type: 'text', role: 'user', data: { text } }, options);
const text = (value: string, options?: { step?: number; turn?: string }) =>
  chunk({ type: 'text', role: 'assistant', data: { text: value } }, options);
const thinking = (value: string, options?: { step?: number }) =>
  chunk({ type: 'thinking', role: 'assistant', data: { text: value, signature: 'sig' } }, options);
const toolCall = (callId: string, input: Record<string, unknown>, options?: { step?: number }) =>
  chunk(
    {
      type: 'tool_call',
      role: 'assistant',
      data: { callId, name: 'calculator', arguments: input },
    },
    options,
  );
const toolResult = (
  callId: string,
  result: unknown,
  isError = false,
  options?: { step?: number },
) =>
  chunk(
    { type: 'tool_result', role: 'tool', data: { callId, name: 'calculator', result, isError } },
    options,
  );

const seal = (sealed: Chunk): StreamEvent => ({
  event: 'chunk-seal',
  data: { tabId, chunk: sealed },
});
const open = (block: Chunk): StreamEvent => ({
  event: 'chunk-open',
  data: {
    tabId,
    id: block.id,
    turnId: block.turnId,
    step: block.step,
    role: block.role,
    type: block.type,
  },
});
const delta = (block: Chunk, offset: number, value: string): StreamEvent => ({
  event: 'chunk-delta',
  data: { tabId, id: block.id, offset, text: value },
});
const turnDone = (
  reason: 'completed' | 'cancelled' | 'error' | 'max_steps',
  turn = turnId,
): StreamEvent => ({
  event: 'turn-done',
  data: {
    tabId,
    turnId: turn,
    reason,
    usage: {
      inputTokens: 1,
      outputTokens: 1,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    },
  },
});
const live = (activeTurnId: string | null): StreamEvent => ({
  event: 'stream-live',
  data: { tabId, after: 0, status: activeTurnId ? 'running' : 'idle', activeTurnId },
});

/** Every part the fold gives for `events`, in order. */
function partsOf(events: StreamEvent[], start: Partial<AnswerStart> = {}): UIMessageChunk[] {
  let state = initialAnswerState({ after: 0, userChunkId, turnId: null, ...start });
  const parts: UIMessageChunk[] = [];
  for (const event of events) {
    const step = answerStep(state, event);
    state = step.state;
    parts.push(...step.parts);
  }
  return parts;
}

/** The assistant message the AI SDK itself builds from `parts`. */
async function sdkMessage(parts: UIMessageChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  let message: UIMessage | undefined;
  for await (const update of readUIMessageStream({ stream, terminateOnError: true })) {
    message = update;
  }
  return message && structuredClone(message);
}

/** A block streamed live: opened, typed in `pieces`, sealed. */
function streamed(block: Chunk, pieces: string[]): StreamEvent[] {
  let offset = 0;
  const deltas = pieces.map((piece) => {
    const event = delta(block, offset, piece);
    offset += piece.length;
    return event;
  });
  return [open(block), ...deltas, seal(block)];
}

function blockIdOf(event: StreamEvent): string | null {
  if (event.event === 'chunk-seal') return event.data.chunk.id;
  if (event.event === 'chunk-open' || event.event === 'chunk-delta') return event.data.id;
  return null;
}

describe('answerStep', () => {
  it('streams a thinking, text and tool-call turn as the SDK parts of one message', () => {
    const question = user('what is 6*7?', { id: userChunkId });
    const plan = thinking('plan first', { step: 0 });
    const call = toolCall('call_1', { expression: '6*7' }, { step: 0 });
    const result = toolResult('call_1', { value: 42 }, false, { step: 0 });
    const answer = text('It is 42.', { step: 1 });
    const parts = partsOf([
      { event: 'turn-start', data: { tabId, turnId } },
      seal(question),
      ...streamed(plan, ['plan ', 'first']),
      seal(call),
      seal(result),
      ...streamed(answer, ['It is', ' 42.']),
      turnDone('completed'),
    ]);
    const tool = { toolCallId: 'call_1', dynamic: true, providerExecuted: true };
    expect(parts).toEqual([
      { type: 'start', messageId: plan.id },
      { type: 'start-step' },
      { type: 'reasoning-start', id: plan.id },
      { type: 'reasoning-delta', id: plan.id, delta: 'plan ' },
      { type: 'reasoning-delta', id: plan.id, delta: 'first' },
      { type: 'reasoning-end', id: plan.id },
      { type: 'tool-input-start', ...tool, toolName: 'calculator' },
      {
        type: 'tool-input-available',
        ...tool,
        toolName: 'calculator',
        input: { expression: '6*7' },
      },
      { type: 'tool-output-available', ...tool, output: { value: 42 } },
      { type: 'finish-step' },
      { type: 'start-step' },
      { type: 'text-start', id: answer.id },
      { type: 'text-delta', id: answer.id, delta: 'It is' },
      { type: 'text-delta', id: answer.id, delta: ' 42.' },
      { type: 'text-end', id: answer.id },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it('skips the chunks before its user chunk and those of other turns', () => {
    const earlier = text('an earlier answer', { turn: otherTurnId });
    const question = user('hi', { id: userChunkId });
    const answer = text('hello');
    const parts = partsOf([
      seal(earlier),
      ...streamed(text('still the other turn', { turn: otherTurnId }), ['still']),
      turnDone('completed', otherTurnId),
      seal(question),
      seal(answer),
      turnDone('completed'),
    ]);
    expect(parts.map((part) => part.type)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(parts[0]).toEqual({ type: 'start', messageId: answer.id });
  });

  it("sends a resumed block's text once: the catch-up's whole text, then only what follows", () => {
    const answer = text('one two three four');
    const parts = partsOf(
      [
        open(answer),
        delta(answer, 0, 'one two'), // the catch-up: the block's text so far
        delta(answer, 4, 'two three'), // overlaps what was sent
        delta(answer, 13, ' four'),
        seal(answer),
      ],
      { userChunkId: null, turnId },
    );
    const deltas = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : []));
    expect(deltas.join('')).toBe('one two three four');
    expect(deltas).toEqual(['one two', ' three', ' four']);
  });

  it('completes a block from its seal when the seal holds more than the deltas sent', () => {
    const answer = text('all of it');
    const parts = partsOf([open(answer), delta(answer, 0, 'all'), seal(answer)], {
      userChunkId: null,
      turnId,
    });
    expect(parts.slice(-2)).toEqual([
      { type: 'text-delta', id: answer.id, delta: ' of it' },
      { type: 'text-end', id: answer.id },
    ]);
  });

  it.each([
    ['completed', 'stop'],
    ['error', 'error'],
    ['cancelled', 'other'],
    ['max_steps', 'other'],
  ] as const)('ends a turn done as %s with finish reason %s', (reason, finishReason) => {
    const parts = partsOf([seal(text('x')), turnDone(reason)], { userChunkId: null, turnId });
    expect(parts.at(-1)).toEqual({ type: 'finish', finishReason });
  });

  it('ends a turn cancelled before its first chunk with an empty message named by the turn', () => {
    expect(partsOf([seal(user('stop', { id: userChunkId })), turnDone('cancelled')])).toEqual([
      { type: 'start', messageId: turnId },
      { type: 'finish', finishReason: 'other' },
    ]);
  });

  it('ends the message when a resume finds its turn over (its turn-done was missed)', () => {
    const answer = text('the whole answer');
    const parts = partsOf([seal(user('q', { id: userChunkId })), seal(answer), live(null)]);
    expect(parts.slice(-2)).toEqual([{ type: 'finish-step' }, { type: 'finish' }]);
    // While the answer's turn still runs, going live ends nothing.
    expect(partsOf([seal(user('q', { id: userChunkId })), live(turnId)])).toEqual([]);
    // Before its user chunk is stored, the message may still wait in the queue.
    expect(partsOf([live(null)])).toEqual([]);
  });

  it('ends the message at the next user chunk of its turn, and sends nothing after', () => {
    const parts = partsOf([
      seal(user('q', { id: userChunkId })),
      ...streamed(text('first'), ['first']),
      seal(user('and this')),
      seal(text('the answer to the interrupt')),
      turnDone('completed'),
    ]);
    expect(parts.slice(-2)).toEqual([
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'other' },
    ]);
    expect(parts.filter((part) => part.type === 'text-start')).toHaveLength(1);
  });

  it('sends an error part for an error chunk, and a tool error as a tool output error', () => {
    const call = toolCall('call_9', {});
    const parts = partsOf(
      [
        seal(call),
        seal(toolResult('call_9', 'no such expression', true)),
        seal(toolResult('call_elsewhere', 'a call of another message')),
        seal(
          chunk({
            type: 'error',
            role: 'assistant',
            data: { message: 'overloaded', statusCode: 529 },
          }),
        ),
        turnDone('error'),
      ],
      { userChunkId: null, turnId },
    );
    expect(parts.slice(-2)).toEqual([
      {
        type: 'tool-output-error',
        toolCallId: 'call_9',
        dynamic: true,
        providerExecuted: true,
        errorText: 'no such expression',
      },
      { type: 'error', errorText: 'overloaded' },
    ]);
  });
});

describe('answerStep and chunksToUIMessages', () => {
  const block = fc.oneof(
    fc.record({
      kind: fc.constant('text' as const),
      text: fc.string({ minLength: 1, maxLength: 40 }),
    }),
    fc.record({
      kind: fc.constant('thinking' as const),
      text: fc.string({ minLength: 1, maxLength: 40 }),
    }),
    fc.record({
      kind: fc.constant('tool' as const),
      isError: fc.boolean(),
      input: fc.dictionary(fc.string({ maxLength: 5 }), fc.integer()),
    }),
  );
  const turn = fc.array(fc.tuple(block, fc.boolean(), fc.integer({ min: 1, max: 4 })), {
    minLength: 1,
    maxLength: 8,
  });

  it('give the same message streamed live, resumed from the log, or read from the log', async () => {
    await fc.assert(
      fc.asyncProperty(turn, fc.integer({ min: 0, max: 20 }), async (blocks, cut) => {
        nextSeq = 1;
        const log: Chunk[] = [user('go', { id: userChunkId })];
        const liveEvents: StreamEvent[] = [seal(log[0]!)];
        let step = 0;
        for (const [spec, nextStep, pieces] of blocks) {
          if (nextStep) step += 1;
          if (spec.kind === 'tool') {
            const call = toolCall(`call_${nextSeq}`, spec.input, { step });
            const result = toolResult(
              call.type === 'tool_call' ? call.data.callId : '',
              'out',
              spec.isError,
              { step },
            );
            log.push(call, result);
            liveEvents.push(seal(call), seal(result));
          } else {
            const sealed =
              spec.kind === 'text' ? text(spec.text, { step }) : thinking(spec.text, { step });
            const size = Math.ceil(spec.text.length / pieces);
            const split = Array.from({ length: pieces }, (_, index) =>
              spec.text.slice(index * size, (index + 1) * size),
            );
            log.push(sealed);
            liveEvents.push(
              ...streamed(
                sealed,
                split.filter((piece) => piece !== ''),
              ),
            );
          }
        }
        liveEvents.push(turnDone('completed'));
        const fromLog = chunksToUIMessages(log);
        expect(fromLog).toHaveLength(2);
        const expected = fromLog[1];
        expect(await sdkMessage(partsOf(liveEvents))).toEqual(expected);
        // A resume: the sealed chunks up to a cut come whole from the catch-up, then live.
        const caughtUp = log.slice(0, Math.min(cut, log.length));
        const caughtUpIds = new Set(caughtUp.map((sealed) => sealed.id));
        const resumed = [
          ...caughtUp.map(seal),
          live(turnId),
          ...liveEvents.filter((event) => !caughtUpIds.has(blockIdOf(event) ?? '')),
        ];
        expect(await sdkMessage(partsOf(resumed))).toEqual(expected);
      }),
      { numRuns: 50 },
    );
  });
});

describe('answerStep and tool approvals', () => {
  const approvalRequest = (callId: string, input: Record<string, unknown>) =>
    chunk({
      type: 'approval_request',
      role: 'system',
      data: { callId, name: 'calculator', arguments: input, expiresAt: null },
    });
  const approvalDecision = (callId: string, decision: 'approve' | 'deny', reason?: string) =>
    chunk(
      {
        type: 'approval_decision',
        role: 'system',
        data: {
          callId,
          name: 'calculator',
          decision,
          ...(reason === undefined ? {} : { reason }),
          decidedBy: 'key_1',
          decidedAt: 1,
        },
      },
      { step: 0 },
    );
  const paused: StreamEvent = {
    event: 'turn-done',
    data: {
      tabId,
      turnId,
      reason: 'awaiting_approval',
      usage: {
        inputTokens: 1,
        outputTokens: 1,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      },
    },
  };
  const waitingLive: StreamEvent = {
    event: 'stream-live',
    data: { tabId, after: 0, status: 'waiting', activeTurnId: null },
  };

  /** A turn paused on one call: the log so far and the events that streamed it. */
  function pausedTurn() {
    nextSeq = 1;
    const question = user('6*7?', { id: userChunkId });
    const call = toolCall('call_1', { expression: '6*7' });
    const request = approvalRequest('call_1', { expression: '6*7' });
    const events: StreamEvent[] = [seal(question), seal(call), seal(request), paused];
    return { log: [question, call, request], events, request };
  }

  /** The SDK's message after the person answered in the chat (`addToolApprovalResponse`). */
  function responded(message: UIMessage, approved: boolean, reason?: string): UIMessage {
    return {
      ...message,
      parts: message.parts.map((part) =>
        part.type === 'dynamic-tool' && part.state === 'approval-requested'
          ? {
              ...part,
              state: 'approval-responded',
              approval: { id: part.approval.id, approved, ...(reason ? { reason } : {}) },
            }
          : part,
      ),
    };
  }

  /** The message the SDK builds from `parts` continuing `message`. */
  async function continued(message: UIMessage, parts: UIMessageChunk[]) {
    const stream = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
    let last: UIMessage | undefined;
    for await (const update of readUIMessageStream({
      message: structuredClone(message),
      stream,
      terminateOnError: true,
    })) {
      last = update;
    }
    return last && structuredClone(last);
  }

  it('sends a waiting call as a tool approval request, ending the message with tool-calls', async () => {
    const { log, events, request } = pausedTurn();
    const parts = partsOf(events);
    expect(parts.slice(-3)).toEqual([
      { type: 'tool-approval-request', approvalId: request.id, toolCallId: 'call_1' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'tool-calls' },
    ]);
    const message = await sdkMessage(parts);
    expect(message?.parts.find((part) => part.type === 'dynamic-tool')).toMatchObject({
      state: 'approval-requested',
      approval: { id: request.id },
      input: { expression: '6*7' },
    });
    // The log gives the same message (a reload while it waits).
    expect(message).toEqual(chunksToUIMessages(log)[1]);
    // A resume that finds it waiting ends the message the same way.
    const resumed = partsOf([...log.map(seal), waitingLive]);
    expect(resumed.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
    expect(await sdkMessage(resumed)).toEqual(message);
  });

  it.each([
    ['approve', undefined, 'output-available'],
    ['deny', 'not today', 'output-denied'],
  ] as const)(
    'goes on in the same message once the chat decided (%s)',
    async (decision, reason, state) => {
      const { log, events, request } = pausedTurn();
      const shown = responded((await sdkMessage(partsOf(events)))!, decision === 'approve', reason);
      const decided = approvalDecision('call_1', decision, reason);
      const result =
        decision === 'approve'
          ? toolResult('call_1', { value: 42 })
          : toolResult('call_1', `denied: ${reason}`, true);
      const answer = text('Done.', { step: 1 });
      const start: Partial<AnswerStart> = {
        userChunkId: null,
        turnId,
        continued: { messageId: shown.id, calls: { call_1: request.id }, decided: ['call_1'] },
      };
      const resumedEvents: StreamEvent[] = [
        // Connected before a worker claimed the wake-up: still waiting, and that ends nothing.
        waitingLive,
        { event: 'turn-start', data: { tabId, turnId } },
        seal(decided),
        seal(result),
        ...streamed(answer, ['Do', 'ne.']),
        turnDone('completed'),
      ];
      const parts = partsOf(resumedEvents, start);
      expect(parts[0]).toEqual({
        type: 'tool-approval-response',
        approvalId: request.id,
        approved: decision === 'approve',
        ...(reason === undefined ? {} : { reason }),
      });
      expect(parts.some((part) => part.type === 'start')).toBe(false);
      const final = await continued(shown, parts);
      const tool = final?.parts.find((part) => part.type === 'dynamic-tool');
      expect(tool).toMatchObject({
        state,
        approval: { id: request.id, approved: decision === 'approve' },
      });
      if (reason !== undefined) expect(tool).toMatchObject({ approval: { reason } });
      expect(final).toEqual(chunksToUIMessages([...log, decided, result, answer])[1]);
    },
  );

  it('ends a resumed stream that finds the turn waiting on new calls', () => {
    const { request } = pausedTurn();
    const second = toolCall('call_2', { expression: '1+1' }, { step: 1 });
    const secondRequest = approvalRequest('call_2', { expression: '1+1' });
    const parts = partsOf(
      [
        seal(approvalDecision('call_1', 'approve')),
        seal(toolResult('call_1', { value: 42 })),
        seal(second),
        seal(secondRequest),
        waitingLive,
      ],
      {
        userChunkId: null,
        turnId,
        continued: { messageId: 'm', calls: { call_1: request.id }, decided: ['call_1'] },
      },
    );
    expect(parts).toContainEqual({
      type: 'tool-approval-request',
      approvalId: secondRequest.id,
      toolCallId: 'call_2',
    });
    expect(parts.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
  });

  it("puts the denial of a call a later message interrupted on that call, in the log's messages", () => {
    const { log, request } = pausedTurn();
    const later = user('never mind');
    const denial = approvalDecision('call_1', 'deny', 'interrupted');
    const result = toolResult('call_1', 'denied: interrupted', true);
    const answer = text('Fine.', { step: 1 });
    const messages = chunksToUIMessages([...log, later, denial, result, answer]);
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(messages[1]?.parts.find((part) => part.type === 'dynamic-tool')).toMatchObject({
      state: 'output-denied',
      approval: { id: request.id, approved: false, reason: 'interrupted' },
    });
    expect(messages[3]?.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Fine.', state: 'done' },
    ]);
  });

  it('leaves out approvals of calls of other messages', () => {
    const parts = partsOf(
      [
        seal(approvalRequest('call_elsewhere', {})),
        seal(approvalDecision('call_elsewhere', 'deny')),
      ],
      { userChunkId: null, turnId },
    );
    expect(parts).toEqual([]);
  });
});
