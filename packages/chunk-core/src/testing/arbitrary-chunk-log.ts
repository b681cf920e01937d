/**
 * Test support (not exported from the package): fast-check generators of chunk logs shaped like
 * what workers write, including the rough edges of cancels, crashes and interrupts.
 */
import fc from 'fast-check';
import type { Chunk, ChunkBody } from '../schemas/chunk';

export const TEST_TAB_ID = '00000000-0000-4000-8000-0000000000ab';

/** A deterministic v4-shaped uuid for test number `n`. */
export function testUuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** Builds chunks with consecutive seqs from bodies tagged with turn and step. */
export class ChunkLogWriter {
  readonly chunks: Chunk[] = [];
  private turnNumber = 0;
  turnId = testUuid(1_000_000);
  step = 0;

  /** Starts a new turn: later chunks carry its id, from step 0. */
  startTurn(): this {
    this.turnNumber += 1;
    this.turnId = testUuid(1_000_000 + this.turnNumber);
    this.step = 0;
    return this;
  }

  write(body: ChunkBody, overrides: { step?: number } = {}): Chunk {
    const seq = this.chunks.length + 1;
    const chunk = {
      id: testUuid(seq),
      tabId: TEST_TAB_ID,
      seq,
      turnId: this.turnId,
      step: overrides.step ?? this.step,
      createdAt: 1_700_000_000_000 + seq,
      ...body,
    } as Chunk;
    this.chunks.push(chunk);
    return chunk;
  }

  userText(text: string): Chunk {
    return this.write({ type: 'text', role: 'user', data: { text } });
  }
  assistantText(text: string, interrupted = false): Chunk {
    return this.write({
      type: 'text',
      role: 'assistant',
      data: interrupted ? { text, interrupted } : { text },
    });
  }
  thinking(text: string, signature?: string): Chunk {
    return this.write({
      type: 'thinking',
      role: 'assistant',
      data: signature === undefined ? { text } : { text, signature },
    });
  }
  redactedThinking(redacted: string): Chunk {
    return this.write({ type: 'thinking', role: 'assistant', data: { redacted } });
  }
  toolCall(callId: string, name = 'lookup', args: Record<string, unknown> = {}): Chunk {
    return this.write({
      type: 'tool_call',
      role: 'assistant',
      data: { callId, name, arguments: args },
    });
  }
  toolResult(callId: string, result: unknown, isError = false): Chunk {
    return this.write({
      type: 'tool_result',
      role: 'tool',
      data: { callId, name: 'lookup', result, isError },
    });
  }
  approvalRequest(callId: string, name = 'lookup', args: Record<string, unknown> = {}): Chunk {
    return this.write({
      type: 'approval_request',
      role: 'system',
      data: { callId, name, arguments: args, expiresAt: null },
    });
  }
  approvalDecision(
    callId: string,
    decision: 'approve' | 'deny',
    extra: { input?: Record<string, unknown>; reason?: string } = {},
  ): Chunk {
    return this.write({
      type: 'approval_decision',
      role: 'system',
      data: {
        callId,
        name: 'lookup',
        decision,
        ...extra,
        decidedBy: 'key_test',
        decidedAt: 1_700_000_000_000,
      },
    });
  }
  error(message: string): Chunk {
    return this.write({ type: 'error', role: 'assistant', data: { message } });
  }
  notice(text: string): Chunk {
    return this.write({ type: 'system', role: 'system', data: { kind: 'notice', text } });
  }
}

const textArbitrary = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n\t', 'trailing space ', 'done.') },
);

const callIdArbitrary = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('toolu_01', 'toolu_02', 'call_1') },
  { weight: 1, arbitrary: fc.constantFrom('call:1', 'call 1', 'ü-ñ', '', 'call_1_2') },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);

const stepArbitrary = fc.record({
  thinking: fc.constantFrom('none', 'signed', 'empty-signed', 'unsigned', 'redacted'),
  text: fc.option(textArbitrary),
  textInterrupted: fc.boolean(),
  calls: fc.array(
    fc.record({
      callId: callIdArbitrary,
      result: fc.constantFrom('ok', 'error', 'empty', 'missing', 'twice', 'object'),
    }),
    { maxLength: 3 },
  ),
  reverseResults: fc.boolean(),
  interrupt: fc.option(textArbitrary),
  interruptFirst: fc.boolean(),
  notice: fc.constantFrom('none', 'error', 'system'),
});

const turnArbitrary = fc.record({
  userText: textArbitrary,
  steps: fc.array(stepArbitrary, { minLength: 1, maxLength: 4 }),
  /** Where a cancel or crash cut the turn: the number of its chunks kept (all when absent). */
  cutAt: fc.option(fc.nat(30), { freq: 3 }),
});

/** Logs of several turns: parallel tool calls, interrupts, cancels mid-block and mid-tool. */
export const arbitraryChunkLog: fc.Arbitrary<Chunk[]> = fc
  .array(turnArbitrary, { minLength: 1, maxLength: 4 })
  .map((turns) => {
    const writer = new ChunkLogWriter();
    for (const turn of turns) {
      writer.startTurn();
      const turnStart = writer.chunks.length;
      writer.userText(turn.userText);
      turn.steps.forEach((step, stepIndex) => {
        writer.step = stepIndex;
        switch (step.thinking) {
          case 'signed':
            writer.thinking('Let me think.', `sig-${stepIndex}`);
            break;
          case 'empty-signed':
            writer.thinking('', `sig-empty-${stepIndex}`);
            break;
          case 'unsigned':
            writer.thinking('cut off mid-thou');
            break;
          case 'redacted':
            writer.redactedThinking('EmwKAhgB');
            break;
        }
        if (step.text !== null) writer.assistantText(step.text, step.textInterrupted);
        for (const call of step.calls) writer.toolCall(call.callId, 'lookup', { q: call.callId });
        if (step.interrupt !== null && step.interruptFirst) writer.userText(step.interrupt);
        const calls = step.reverseResults ? [...step.calls].reverse() : step.calls;
        for (const call of calls) {
          switch (call.result) {
            case 'ok':
              writer.toolResult(call.callId, `result of ${call.callId}`);
              break;
            case 'error':
              writer.toolResult(call.callId, 'it failed', true);
              break;
            case 'empty':
              writer.toolResult(call.callId, '', true);
              break;
            case 'object':
              writer.toolResult(call.callId, { rows: [1, 2], note: null });
              break;
            case 'twice':
              writer.toolResult(call.callId, 'first');
              writer.toolResult(call.callId, 'second');
              break;
            case 'missing':
              break;
          }
        }
        if (step.interrupt !== null && !step.interruptFirst) writer.userText(step.interrupt);
        if (step.notice === 'error') writer.error('overloaded');
        if (step.notice === 'system') writer.notice('worker restarted');
      });
      if (turn.cutAt !== null) {
        // A cancel or crash: the turn's later chunks were never written.
        writer.chunks.length = Math.min(writer.chunks.length, turnStart + 1 + turn.cutAt);
      }
    }
    return writer.chunks.map((chunk, index) => ({
      ...chunk,
      seq: index + 1,
      id: testUuid(index + 1),
    }));
  });

/** Any chunk bodies in any order: logs no worker would write, for totality. */
export const arbitraryChaoticLog: fc.Arbitrary<Chunk[]> = fc
  .array(
    fc.record({
      turn: fc.nat(2),
      step: fc.nat(3),
      body: fc.oneof(
        fc.record({
          type: fc.constant('text' as const),
          role: fc.constantFrom('user' as const, 'assistant' as const),
          data: fc.record({ text: textArbitrary }),
        }),
        fc.record({
          type: fc.constant('thinking' as const),
          role: fc.constant('assistant' as const),
          data: fc.oneof(
            fc.record({ text: textArbitrary, signature: fc.constantFrom('sig', '') }),
            fc.record({ text: textArbitrary }),
            fc.record({ redacted: fc.constant('opaque') }),
          ),
        }),
        fc.record({
          type: fc.constant('tool_call' as const),
          role: fc.constant('assistant' as const),
          data: fc.record({
            callId: callIdArbitrary,
            name: fc.constantFrom('lookup', ''),
            arguments: fc.constant({}),
          }),
        }),
        fc.record({
          type: fc.constant('tool_result' as const),
          role: fc.constant('tool' as const),
          data: fc.record({
            callId: callIdArbitrary,
            name: fc.constant('lookup'),
            result: fc.oneof(fc.string(), fc.constant(null), fc.constant(undefined), fc.integer()),
            isError: fc.boolean(),
          }),
        }),
        fc.record({
          type: fc.constant('error' as const),
          role: fc.constant('system' as const),
          data: fc.record({ message: fc.string() }),
        }),
      ),
    }),
    { maxLength: 25 },
  )
  .map((entries) =>
    entries.map(
      (entry, index) =>
        ({
          id: testUuid(index + 1),
          tabId: TEST_TAB_ID,
          seq: index + 1,
          turnId: testUuid(1_000_000 + entry.turn),
          step: entry.step,
          createdAt: 1_700_000_000_000 + index,
          ...entry.body,
        }) as Chunk,
    ),
  );
