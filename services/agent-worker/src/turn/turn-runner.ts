import type Anthropic from '@anthropic-ai/sdk';
import {
  addUsage,
  type Chunk,
  describeError,
  emptyUsage,
  type TabConfig,
  type ToolCallData,
  type TurnDoneReason,
  type Usage,
} from '@chunklog/chunk-core';
import type { ChunkStore, InboxMessage } from '@chunklog/store';
import type { CancelWatch } from '../holding/cancel-watch';
import { type ChunkToAppend, LeaseLostError, type TabSession } from '../holding/tab-session';
import type { Logger } from '../logger';
import { secondsSince, type ToolCallOutcome, type WorkerMetrics } from '../metrics/worker-metrics';
import { buildStepRequest } from '../request/step-request';
import type { ToolRegistry } from '../tools/tool-registry';
import { errorStatus, type RetryPolicy, retryDelay } from './retry-policy';
import { type StepToolCall, streamStep } from './stream-step';

/** What a turn needs besides the tab it runs on. */
export interface TurnDependencies {
  store: ChunkStore;
  anthropic: Anthropic;
  tools: ToolRegistry;
  newId: () => string;
  logger: Logger;
  retry: RetryPolicy;
  defaults: { model: string; maxSteps: number; maxTokens: number };
  /** Names withheld from this turn's model (the subagent's own `task`, for one). */
  excludeTools?: readonly string[];
  /** Where model, retry and tool figures go (absent: not measured). */
  metrics?: WorkerMetrics;
}

/** How a turn begins: with a new user message, or by resuming a turn another worker left. */
export type TurnStart =
  | { kind: 'message'; message: Pick<InboxMessage, 'chunkId' | 'text'> }
  | { kind: 'resume'; step: number };

export interface TurnOutcome {
  reason: TurnDoneReason;
  usage: Usage;
}

/** Tool calls of a turn that have no result in the log yet. */
export function unansweredToolCalls(log: readonly Chunk[], turnId: string): Chunk[] {
  const answered = new Set<string>();
  for (const chunk of log) if (chunk.type === 'tool_result') answered.add(chunk.data.callId);
  return log.filter(
    (chunk) =>
      chunk.turnId === turnId && chunk.type === 'tool_call' && !answered.has(chunk.data.callId),
  );
}

/**
 * Runs one turn on a tab whose lease the caller holds: appends the opening user chunk, then
 * per step builds the request from the log, streams the model into sealed chunks, runs the
 * step's tool calls concurrently (each result sealed as it completes), and folds waiting
 * `interrupt` messages in after the step's tool results. Publishes turn-start (not turn-done).
 * Before every model call it reads the tab's cancel generation, so a cancel nobody heard on NATS
 * still stops the turn (the opening user chunk is written first: an accepted message is never
 * lost). Throws LeaseLostError when another worker took the tab: then it must not write anything.
 */
export async function runTurn(input: {
  deps: TurnDependencies;
  session: TabSession;
  config: TabConfig;
  turnId: string;
  start: TurnStart;
  /** Decides cancel; its signal also aborts on lease loss (through the session). */
  cancel: CancelWatch;
}): Promise<TurnOutcome> {
  const { deps, session, config, turnId, start, cancel } = input;
  const signal = cancel.signal;
  const { store, tools, newId, logger, metrics } = deps;
  const tabId = session.tabId;
  const maxSteps = config.maxSteps ?? deps.defaults.maxSteps;
  let usage = emptyUsage();

  const append = (bodies: ChunkToAppend[]) => session.append(bodies);

  /** Reads the tab's cancel generation; a failed read only delays the cancel to the next one. */
  const checkCancel = async () => {
    try {
      cancel.hear(await store.cancelGeneration(tabId));
    } catch (error) {
      logger.warn('cancel check failed', { tabId, turnId, error: describeError(error) });
    }
  };

  /**
   * Appends waiting interrupts (and refuses rejects) after `step`'s tool results. Once the turn
   * is cancelled, only messages accepted before the cancel: later ones wait for a turn of their own.
   */
  const drainInbox = async (step: number): Promise<number> => {
    const waiting = await store.inboxList(tabId);
    // A stamp above the turn's own can only come from a cancel made before that message.
    for (const message of waiting) cancel.hear(message.cancelGeneration);
    const cancelledAt = cancel.cancelledAt();
    const known = new Set(session.log.map((chunk) => chunk.id));
    const bodies: ChunkToAppend[] = [];
    const done: string[] = [];
    let interrupts = 0;
    for (const message of waiting) {
      if (known.has(message.chunkId)) {
        // Appended by a worker that died before clearing its inbox entry.
        done.push(message.chunkId);
        continue;
      }
      if (cancelledAt !== null && message.cancelGeneration >= cancelledAt) continue;
      if (message.mode === 'interrupt') {
        bodies.push({
          id: message.chunkId,
          turnId,
          step,
          role: 'user',
          type: 'text',
          data: { text: message.text },
        });
        interrupts++;
        done.push(message.chunkId);
      } else if (message.mode === 'reject') {
        bodies.push({
          id: newId(),
          turnId,
          step,
          role: 'system',
          type: 'system',
          data: { kind: 'message-rejected', text: 'A message was rejected: a turn was running.' },
        });
        done.push(message.chunkId);
      }
      // `enqueue` messages wait for a turn of their own.
    }
    if (bodies.length > 0) await append(bodies);
    if (done.length > 0) await store.inboxRemove(tabId, done);
    return interrupts;
  };

  /** Error results for calls the turn will never answer, so the log builds a valid request. */
  const answerUnanswered = async (why: string) => {
    // Results already on their way to the log must land first, or a call would get two.
    await session.settled();
    const calls = unansweredToolCalls(session.log, turnId);
    if (calls.length === 0) return;
    await append(
      calls.map((call) => {
        const data = call.data as ToolCallData;
        return {
          id: newId(),
          turnId,
          step: call.step,
          role: 'tool',
          type: 'tool_result',
          data: { callId: data.callId, name: data.name, result: why, isError: true },
        } satisfies ChunkToAppend;
      }),
    );
  };

  const runTools = async (calls: StepToolCall[], step: number) => {
    const all = Promise.all(
      calls.map(async (call) => {
        const startedAt = performance.now();
        const outcome =
          call.invalidInput === undefined
            ? await tools.run(call.name, call.arguments, {
                tabId,
                turnId,
                callId: call.callId,
                signal,
              })
            : {
                result: `The tool input was not a JSON object: ${call.invalidInput.slice(0, 500)}`,
                isError: true,
              };
        if (metrics) {
          const toolOutcome: ToolCallOutcome = signal.aborted
            ? 'cancelled'
            : outcome.isError
              ? 'error'
              : 'ok';
          // Names come from the model: only registered ones become labels, to bound cardinality.
          const tool = tools.has(call.name) ? call.name : 'unknown';
          metrics.toolSeconds.observe({ tool, outcome: toolOutcome }, secondsSince(startedAt));
        }
        // A cancelled turn answers its calls itself; a late result must not land after that.
        if (signal.aborted) return;
        await append([
          {
            id: newId(),
            turnId,
            step,
            role: 'tool',
            type: 'tool_result',
            data: {
              callId: call.callId,
              name: call.name,
              result: outcome.result,
              isError: outcome.isError,
            },
          },
        ]);
      }),
    );
    // Cancel must not wait for a tool that ignores its abort signal.
    await untilSettledOrAborted(all, signal);
  };

  // turn-done is the caller's to publish: after the lease is released, so a client reacting
  // to it already finds the tab idle.
  const finish = async (reason: TurnDoneReason): Promise<TurnOutcome> => ({ reason, usage });

  /** Ends the turn cancelled; `lastStep` is the step whose results waiting interrupts follow. */
  const cancelled = async (lastStep: number): Promise<TurnOutcome> => {
    if (session.lost) throw new LeaseLostError(tabId);
    await answerUnanswered('Cancelled before the tool finished.');
    // Messages accepted before the cancel are part of what it stopped: their chunks land now,
    // unanswered, rather than each opening a turn that would be cancelled in turn.
    await drainInbox(lastStep);
    return finish('cancelled');
  };

  let step = 0;
  if (start.kind === 'message') {
    await session.publish({ event: 'turn-start', data: { tabId, turnId } });
    if (!session.log.some((chunk) => chunk.id === start.message.chunkId)) {
      await append([
        {
          id: start.message.chunkId,
          turnId,
          step: 0,
          role: 'user',
          type: 'text',
          data: { text: start.message.text },
        },
      ]);
    }
    await store.inboxRemove(tabId, [start.message.chunkId]);
  } else {
    step = start.step;
  }
  await drainInbox(step === 0 ? 0 : step - 1);

  try {
    for (; ; step++) {
      const lastStep = step === 0 ? 0 : step - 1;
      // Before every model call, and so after the tab was subscribed to and its log loaded: a
      // cancel recorded while no worker held the tab, or published before its holder listened.
      await checkCancel();
      if (signal.aborted) return await cancelled(lastStep);
      if (step >= maxSteps) {
        // Said in the log too: a client that reads it later (turn-done is live only) sees why
        // the turn ended without an answer.
        await append([
          {
            id: newId(),
            turnId,
            step: step - 1,
            role: 'system',
            type: 'system',
            data: {
              kind: 'max-steps',
              text: `The turn stopped after ${maxSteps} model steps, the tab's step cap.`,
            },
          },
        ]);
        return await finish('max_steps');
      }

      const offered = tools
        .describe(config.tools)
        .filter((tool) => !deps.excludeTools?.includes(tool.name));

      let toolCalls: StepToolCall[] = [];
      let stopReason: string | null = null;
      for (let attempt = 1; ; attempt++) {
        // Rebuilt per attempt: a failed attempt may have sealed chunks the retry must carry.
        const request = buildStepRequest({
          fold: session.fold,
          config,
          defaults: deps.defaults,
          tools: offered,
        });
        const result = await streamStep({
          anthropic: deps.anthropic,
          request,
          signal,
          session,
          turnId,
          step,
          newId,
          ...(metrics ? { metrics } : {}),
        });
        usage = addUsage(usage, result.usage);
        toolCalls.push(...result.toolCalls);
        if (result.outcome === 'aborted') return await cancelled(step);
        if (result.outcome === 'finished') {
          stopReason = result.stopReason;
          break;
        }
        if (result.error instanceof LeaseLostError) throw result.error;
        // Calls sealed before a mid-stream failure are real: answer them and move on.
        if (toolCalls.length > 0) break;
        const delay = retryDelay(result.error, attempt, deps.retry);
        logger.warn('model call failed', {
          tabId,
          turnId,
          step,
          attempt,
          retryInMs: delay,
          error: describeError(result.error),
        });
        if (delay === null) {
          const statusCode = errorStatus(result.error);
          await append([
            {
              id: newId(),
              turnId,
              step,
              role: 'assistant',
              type: 'error',
              data: {
                message: `The model call failed: ${describeError(result.error)}`,
                ...(statusCode !== undefined ? { statusCode } : {}),
              },
            },
          ]);
          await answerUnanswered('The turn ended with an error before the tool ran.');
          return await finish('error');
        }
        metrics?.modelRetries.inc({ status: String(errorStatus(result.error) ?? 'none') });
        await sleep(delay, signal);
        // A retry is a model call too: a cancel recorded during the wait (retry-after can be a
        // minute) and never heard on NATS stops the turn here, not after one more answer.
        await checkCancel();
        if (signal.aborted) return await cancelled(step);
        toolCalls = [];
      }

      if (toolCalls.length > 0) {
        await runTools(toolCalls, step);
        if (signal.aborted) return await cancelled(step);
      }
      const interrupts = await drainInbox(step);
      const modelWantsMore = toolCalls.length > 0 || stopReason === 'pause_turn';
      if (!modelWantsMore && interrupts === 0) return await finish('completed');
    }
  } catch (error) {
    if (error instanceof LeaseLostError || session.lost) throw error;
    // Anything else (a database outage, a bug) still ends the turn visibly when it can.
    logger.error('turn failed', { tabId, turnId, error: describeError(error) });
    try {
      await append([
        {
          id: newId(),
          turnId,
          step,
          role: 'system',
          type: 'error',
          data: { message: `The turn failed: ${describeError(error)}` },
        },
      ]);
      await answerUnanswered('The turn failed before the tool finished.');
    } catch (appendError) {
      logger.error('could not record the turn failure', {
        tabId,
        error: describeError(appendError),
      });
    }
    return finish('error');
  }
}

function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, milliseconds);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Waits for `work`, or only until `signal` aborts; leaves no listener behind either way. */
function untilSettledOrAborted(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
