import type Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsStreaming as BetaStreamingRequest } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  type CacheMiss,
  COMPACTION_BETA,
  cacheMissOfMessage,
  initialStreamState,
  interruptedBlock,
  reduceStreamEvent,
  type StreamChunkBody,
  type StreamOperation,
  type StreamState,
  type ToolCallData,
  type Usage,
} from '@chunklog/chunk-core';
import { inSpan, recordSpanError } from '@chunklog/runtime';
import { wasInterrupted } from '../holding/interrupt-watch';
import type { TabSession } from '../holding/tab-session';
import { type ModelStepOutcome, secondsSince, type WorkerMetrics } from '../metrics/worker-metrics';
import { GEN_AI, usageAttributes } from '../tracing/gen-ai-attributes';
import type { PromptMemory } from './prompt-memory';

/** A tool call the model made in this step; `invalidInput` when its input was not a JSON object. */
export type StepToolCall = ToolCallData & { invalidInput?: string };

/** How one model call (one attempt at a step) ended. */
export type StreamStepResult =
  | {
      outcome: 'finished';
      stopReason: string | null;
      usage: Usage;
      toolCalls: StepToolCall[];
      /** The response's `diagnostics.cache_miss_reason`; null when the cache was not missed. */
      cacheMiss: CacheMiss | null;
    }
  /** Failed (HTTP error, mid-stream `error` event, cut stream); what sealed before stays. */
  | { outcome: 'failed'; error: unknown; usage: Usage; toolCalls: StepToolCall[] }
  /** Aborted by cancel or lease loss; the partial text was sealed with interrupted: true. */
  | { outcome: 'aborted'; usage: Usage; toolCalls: StepToolCall[] }
  /** Cut by an interrupting message; sealed as for an abort, and no failure. */
  | { outcome: 'interrupted'; usage: Usage; toolCalls: StepToolCall[] };

/** The SDK throws on the `error` event, so a stream that just stops is reported with this. */
export class StreamEndedEarlyError extends Error {
  constructor() {
    super('The model stream ended before message_stop');
    this.name = 'StreamEndedEarlyError';
  }
}

/**
 * Streams one model call and turns it into chunks with chunk-core's reducer: text and thinking
 * blocks open, stream deltas (published with their offsets) and seal at their stop; tool calls
 * seal at once. Each seal is appended (fenced) before the next event is read, so the log order
 * is the stream order, and its chunk-seal event goes out only after the commit.
 */
export function streamStep(input: StreamStepInput): Promise<StreamStepResult> {
  // The model step's span, with the GenAI attributes; the SDK's own `anthropic.messages.create`
  // span (the HTTP call, with the SDK's view of the same usage) is its child.
  return inSpan(
    'chunklog.model_step',
    {
      attributes: {
        [GEN_AI.system]: 'anthropic',
        [GEN_AI.providerName]: 'anthropic',
        [GEN_AI.operationName]: 'chat',
        [GEN_AI.requestModel]: input.request.model,
        [GEN_AI.requestMaxTokens]: input.request.max_tokens,
        [GEN_AI.conversationId]: input.session.tabId,
        'chunklog.tab_id': input.session.tabId,
        'chunklog.turn_id': input.turnId,
        'chunklog.step': input.step,
      },
    },
    async (span) => {
      const result = await streamModel(input);
      span.setAttributes({
        'chunklog.step.outcome': result.outcome,
        ...usageAttributes(result.usage),
      });
      if (result.outcome === 'finished' && result.stopReason !== null) {
        span.setAttribute(GEN_AI.responseFinishReasons, [result.stopReason]);
      }
      if (result.outcome === 'failed') recordSpanError(span, result.error);
      return result;
    },
  );
}

interface StreamStepInput {
  anthropic: Anthropic;
  /** The request body without `stream` (built from the log). */
  request: Anthropic.MessageCreateParamsNonStreaming;
  signal: AbortSignal;
  session: TabSession;
  turnId: string;
  step: number;
  newId: () => string;
  metrics?: WorkerMetrics;
  /** The tab's latest step response: read for diagnostics, written when this one finishes. */
  prompts: PromptMemory;
}

async function streamModel(input: StreamStepInput): Promise<StreamStepResult> {
  const { anthropic, request, signal, session, turnId, step, newId, metrics, prompts } = input;
  const tabId = session.tabId;
  const idsByIndex = new Map<number, string>();
  const toolCalls: StepToolCall[] = [];
  let state: StreamState = initialStreamState();

  const idFor = (index: number): string => {
    let id = idsByIndex.get(index);
    if (!id) {
      id = newId();
      idsByIndex.set(index, id);
    }
    return id;
  };

  let cacheMiss: CacheMiss | null = null;
  let missRecorded = false;
  const seal = async (index: number, body: StreamChunkBody, invalidInput?: string) => {
    const id = idFor(index);
    if (session.open?.id === id) session.open = null;
    // The step's first chunk carries why its request missed the cache (known at message_start).
    const recorded =
      cacheMiss === null || missRecorded
        ? body
        : ({ ...body, data: { ...body.data, cacheMiss } } as StreamChunkBody);
    missRecorded = true;
    await session.append([{ id, turnId, step, ...recorded }]);
    if (body.type === 'tool_call') {
      toolCalls.push(invalidInput === undefined ? body.data : { ...body.data, invalidInput });
    }
  };

  const apply = async (operation: StreamOperation) => {
    switch (operation.kind) {
      case 'open': {
        const id = idFor(operation.index);
        // Only text and thinking stream; tool calls seal at once and never open.
        const type = operation.type === 'thinking' ? 'thinking' : 'text';
        session.open = { id, turnId, step, role: 'assistant', type, text: '' };
        await session.publish({
          event: 'chunk-open',
          data: { tabId, id, turnId, step, role: 'assistant', type },
        });
        break;
      }
      case 'delta': {
        const id = idFor(operation.index);
        if (session.open?.id === id) session.open.text += operation.text;
        await session.publish({
          event: 'chunk-delta',
          data: { tabId, id, offset: operation.offset, text: operation.text },
        });
        break;
      }
      case 'seal':
        await seal(operation.index, operation.body, operation.invalidInput);
        break;
      default: {
        const unexpected: never = operation;
        throw new Error(`Unknown stream operation ${JSON.stringify(unexpected)}`);
      }
    }
  };

  /** Per chunk-core's rule: cut-off text seals as interrupted, other cut-off blocks are dropped. */
  const closeInterrupted = async () => {
    const left = interruptedBlock(state);
    state = { ...state, open: null };
    if (left?.disposition === 'seal' && !session.lost) await seal(left.index, left.body);
    session.open = null;
  };

  const startedAt = performance.now();
  const timed = (outcome: ModelStepOutcome) =>
    metrics?.modelStepSeconds.observe({ outcome }, secondsSince(startedAt));
  let firstEventSeen = false;

  // Every step asks why it missed the cache, against the previous step's response.
  const body = {
    ...request,
    stream: true as const,
    diagnostics: { previous_message_id: prompts.get(tabId)?.messageId ?? null },
  };
  const coveredSeq = session.log.at(-1)?.seq ?? 0;
  let messageId: string | undefined;

  try {
    // Once the log holds a compaction, its block is in the messages: only the beta takes it.
    const stream = opensWithCompaction(request)
      ? await anthropic.beta.messages.create(
          { ...(body as BetaStreamingRequest), betas: [COMPACTION_BETA] },
          { signal },
        )
      : await anthropic.messages.create(body, { signal });
    for await (const event of untilAborted<Anthropic.RawMessageStreamEvent>(
      stream as AsyncIterable<Anthropic.RawMessageStreamEvent>,
      signal,
    )) {
      if (!firstEventSeen) {
        firstEventSeen = true;
        metrics?.modelFirstEventSeconds.observe(secondsSince(startedAt));
      }
      if (event.type === 'message_start') {
        messageId = event.message.id;
        cacheMiss = cacheMissOfMessage(event.message) ?? null;
      }
      const result = reduceStreamEvent(state, event);
      state = result.state;
      for (const operation of result.operations) await apply(operation);
    }
    if (!state.finished) throw new StreamEndedEarlyError();
    session.open = null;
    timed('finished');
    if (messageId !== undefined) {
      const { inputTokens, cacheReadInputTokens, cacheCreationInputTokens } = state.usage;
      prompts.set(tabId, {
        messageId,
        figures: {
          inputTokens: inputTokens + cacheReadInputTokens + cacheCreationInputTokens,
          seq: coveredSeq,
        },
      });
    }
    if (cacheMiss !== null) metrics?.cacheMisses.inc({ reason: cacheMiss.reason });
    return {
      outcome: 'finished',
      stopReason: state.stopReason,
      usage: state.usage,
      toolCalls,
      cacheMiss,
    };
  } catch (error) {
    try {
      await closeInterrupted();
    } catch {
      // The step already failed; the original error is the one worth reporting.
    }
    if (signal.aborted) {
      const outcome = wasInterrupted(signal) ? 'interrupted' : 'aborted';
      timed(outcome);
      return { outcome, usage: state.usage, toolCalls };
    }
    timed('failed');
    return { outcome: 'failed', error, usage: state.usage, toolCalls };
  }
}

/** Whether the request opens with a compaction block, which only the compaction beta takes. */
export function opensWithCompaction(request: Anthropic.MessageCreateParamsNonStreaming): boolean {
  const first = request.messages[0]?.content;
  return Array.isArray(first) && (first[0]?.type as string | undefined) === 'compaction';
}

/**
 * The stream's events until it ends or the signal aborts. The SDK's stream, aborted after the
 * whole response has arrived (a cancel landing while the last block is being stored), yields
 * the events it holds and then neither ends nor throws; a turn waiting on it would hold its tab
 * forever. Here the abort ends the wait at once, as an error.
 */
async function* untilAborted<T>(events: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = events[Symbol.asyncIterator]();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason ?? new Error('aborted'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  // Handled by the race below; this keeps an abort after the last event from going unhandled.
  aborted.catch(() => {});
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    // Not awaited: on an aborted stream it may never settle.
    iterator.return?.()?.catch(() => {});
  }
}
