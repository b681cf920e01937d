import { addUsage } from '@chunklog/chunk-core';
import { LeaseLostError } from '../holding/held-tab';
import { wasInterrupted } from '../holding/interrupt-watch';
import { buildStepRequest } from '../request/step-request';
import { compactionSettings, compactTab, isBlockRefusal, isPromptTooLong } from './compact';
import { type StepToolCall, streamStep } from './stream-step';
import { checkCancel, offeredTools, type RunningTurn } from './turn';
import { waitToRetry } from './wait-to-retry';

/** How a step's model call ended, retries included. */
export type ModelStepResult =
  | { kind: 'answered'; toolCalls: StepToolCall[]; stopReason: string | null }
  | { kind: 'cancelled' }
  /**
   * Cut by an interrupting message (mid-stream, or while waiting to retry): the partial text is
   * sealed as interrupted; `toolCalls` are the calls sealed before the cut, never run.
   */
  | { kind: 'interrupted'; toolCalls: StepToolCall[] }
  /** Failed for good: not retryable, or out of attempts; nothing of the step was sealed. */
  | { kind: 'failed'; error: unknown };

/**
 * Calls the model for `step`, retrying what the retry policy allows. Each attempt is built from
 * the log as it is then (a failed attempt may have sealed chunks); calls sealed before a
 * mid-stream failure are real, so the step ends with them. A cut by `signal` is never retried.
 */
export async function callModel(
  turn: RunningTurn,
  step: number,
  signal: AbortSignal,
): Promise<ModelStepResult> {
  const { deps, session, config, turnId } = turn;
  const offered = offeredTools(turn);
  let toolCalls: StepToolCall[] = [];
  let compactedForLength = false;
  let compactedForRefusal = false;
  for (let attempt = 1; ; attempt++) {
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
      newId: deps.newId,
      prompts: deps.prompts,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    });
    turn.usage = addUsage(turn.usage, result.usage);
    toolCalls.push(...result.toolCalls);
    if (result.outcome === 'aborted') return { kind: 'cancelled' };
    if (result.outcome === 'interrupted') return { kind: 'interrupted', toolCalls };
    if (result.outcome === 'finished') {
      if (result.cacheMiss !== null) {
        deps.logger.info(
          { tabId: session.tabId, turnId, step, cacheMiss: result.cacheMiss },
          'prompt cache missed',
        );
      }
      return { kind: 'answered', toolCalls, stopReason: result.stopReason };
    }
    if (result.error instanceof LeaseLostError) throw result.error;
    if (toolCalls.length > 0) return { kind: 'answered', toolCalls, stopReason: null };
    // The log outgrew the window: compact it and send the step once more.
    if (isPromptTooLong(result.error) && !compactedForLength) {
      compactedForLength = true;
      const compacted = await compactTab(turn, step, compactionSettings(turn), 'too_long');
      if (compacted === 'cancelled') return { kind: 'cancelled' };
      if (compacted === 'compacted') {
        toolCalls = [];
        continue;
      }
    }
    // The API refused the stored compaction block (it no longer verifies): sent again it would
    // be refused on every step, forever. Compact again from its summary text and send once more.
    if (isBlockRefusal(result.error) && !compactedForRefusal) {
      compactedForRefusal = true;
      const compacted = await compactTab(turn, step, compactionSettings(turn), 'refused');
      if (compacted === 'cancelled') return { kind: 'cancelled' };
      if (compacted === 'compacted') {
        toolCalls = [];
        continue;
      }
    }
    const failure = { error: result.error, attempt, step, what: 'model call failed' };
    if (!(await waitToRetry(turn, failure, signal))) return { kind: 'failed', error: result.error };
    // A retry is a model call too: a cancel recorded during the wait (retry-after can be a
    // minute) and never heard on NATS stops the turn here, not after one more answer.
    await checkCancel(turn);
    if (turn.cancel.signal.aborted) return { kind: 'cancelled' };
    // A new message arrived meanwhile: the next step answers it instead of this retry.
    if (wasInterrupted(signal)) return { kind: 'interrupted', toolCalls: [] };
    toolCalls = [];
  }
}
