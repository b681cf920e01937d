import Anthropic from '@anthropic-ai/sdk';
import type {
  MessageCountTokensParams as BetaCountTokensParams,
  MessageCreateParamsNonStreaming as BetaRequest,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  addUsage,
  buildCompactionRequest,
  COMPACTION_BETA,
  type CompactionErrorCode,
  CompactionErrorCodeSchema,
  compactionAsText,
  compactionDataFromResponse,
  fitChunkForWire,
  type Usage,
} from '@chunklog/chunk-core';
import { LeaseLostError } from '../holding/held-tab';
import { stepRequestOptions } from '../request/step-request';
import { opensWithCompaction } from './stream-step';
import { offeredTools, type RunningTurn } from './turn';
import { waitToRetry } from './wait-to-retry';

/**
 * Why a compaction was asked for, as the metric's `cause` label. `refused`: the API refused the
 * tab's stored compaction block, so the tab is compacted again from the block's summary text.
 */
export type CompactionCause = 'threshold' | 'too_long' | 'requested' | 'refused';

/** How a compaction ended. */
export type CompactionOutcome =
  | 'compacted'
  /** Nothing new to summarize (the log since the latest compaction is one unfinished step). */
  | 'nothing'
  | 'cancelled'
  /** Refused for good, or out of attempts; nothing was stored. */
  | 'failed';

/** The context window and when to compact, for a tab (its config over the worker's). */
export interface CompactionSettings {
  /** The model's context window, in tokens. */
  contextWindowTokens: number;
  /** Compact before a step whose request would pass this share of the window. */
  threshold: number;
  /** Replaces the API's summarization prompt. */
  instructions?: string;
  /** False: never compact before a step (recovery from a too-long prompt still does). */
  enabled: boolean;
}

/** A tab's compaction settings: its `config.compaction` over the worker's window and threshold. */
export function compactionSettings(turn: RunningTurn): CompactionSettings {
  const tab = turn.config.compaction;
  const worker = turn.deps.compaction;
  return {
    contextWindowTokens: worker.contextWindowTokens,
    threshold: tab?.threshold ?? worker.threshold,
    enabled: tab?.enabled ?? true,
    ...(tab?.instructions === undefined ? {} : { instructions: tab.instructions }),
  };
}

/** The SDK's view of a 400 "prompt is too long" (the request passed the context window). */
export function isPromptTooLong(error: unknown): boolean {
  return (
    error instanceof Anthropic.BadRequestError && /prompt is too long/i.test(error.message ?? '')
  );
}

/**
 * The `error_code` of the API's refusal of a compaction block or request (a 400
 * `invalid_request_error` with `error.details.error_code`), or undefined for any other error.
 */
export function compactionRefusal(error: unknown): CompactionErrorCode | undefined {
  if (!(error instanceof Anthropic.BadRequestError)) return undefined;
  const body = error.error as { error?: { details?: { error_code?: unknown } } } | undefined;
  const parsed = CompactionErrorCodeSchema.safeParse(body?.error?.details?.error_code);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Refusals of the block a request opens with: it does not verify (a changed key, an altered
 * stored block) or sits where the API does not take it. Sending it again cannot succeed.
 */
const blockRefusals: ReadonlySet<CompactionErrorCode> = new Set([
  'compaction_signature_invalid',
  'compaction_content_mismatch',
  'compaction_tool_changes_mismatch',
  'compaction_block_ambiguous',
  'compaction_block_misplaced',
]);

/** Whether `error` is the API refusing the compaction block the request opened with. */
export function isBlockRefusal(error: unknown): boolean {
  const code = compactionRefusal(error);
  return code !== undefined && blockRefusals.has(code);
}

/**
 * Whether the next step's request would pass the tab's threshold: the input the previous
 * response reported (exact) plus an estimate of the chunks since (UTF-8 bytes / 4). Without a
 * previous response the estimate covers the whole request and, being rough, is checked with
 * `count_tokens` when it is within a factor of two of the limit.
 */
export async function wouldPassThreshold(
  turn: RunningTurn,
  settings: CompactionSettings,
  request: () => Anthropic.MessageCreateParamsNonStreaming,
): Promise<boolean> {
  const { session } = turn;
  const limit = settings.threshold * settings.contextWindowTokens;
  const last = turn.deps.prompts.get(session.tabId)?.figures;
  if (last !== undefined) {
    const added = session.log
      .filter((chunk) => chunk.seq > last.seq)
      // As the request will carry them: an oversized chunk only by its cut view.
      .map((chunk) => fitChunkForWire(chunk, turn.deps.defaults.maxChunkBytes));
    return last.inputTokens + estimateTokens(added) > limit;
  }
  const built = request();
  const estimate = estimateTokens(built);
  if (estimate < limit / 2 || estimate > limit * 2) return estimate > limit;
  return ((await countTokens(turn, built)) ?? estimate) > limit;
}

/** The API's count of a request's input tokens; undefined when it could not be had. */
async function countTokens(
  turn: RunningTurn,
  request: Anthropic.MessageCreateParamsNonStreaming,
): Promise<number | undefined> {
  const { deps, session, turnId } = turn;
  // Counting takes the conversation, not the generation settings.
  const { max_tokens: _maxTokens, ...counted } = request;
  const signal = turn.cancel.signal;
  try {
    const answer = opensWithCompaction(request)
      ? await deps.anthropic.beta.messages.countTokens(
          { ...(counted as BetaCountTokensParams), betas: [COMPACTION_BETA] },
          { signal },
        )
      : await deps.anthropic.messages.countTokens(counted, { signal });
    return answer.input_tokens;
  } catch (error) {
    deps.logger.warn(
      { err: error, tabId: session.tabId, turnId },
      'count_tokens failed; the threshold check uses the estimate',
    );
    return undefined;
  }
}

function estimateTokens(value: unknown): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify(value)) / 4);
}

/**
 * Compacts the tab: sends the compaction request through the beta endpoint, with the retry
 * policy's backoff, and appends the answer as a `compaction` chunk, fenced like any chunk. When
 * the API refuses the stored block, the request carries its summary as text instead, and the
 * fresh block replaces it. A cancel or a failure stores nothing.
 */
export async function compactTab(
  turn: RunningTurn,
  step: number,
  settings: CompactionSettings,
  cause: CompactionCause,
  /** The compaction chunk's id (a requested compaction's); a fresh one by default. */
  chunkId: string = turn.deps.newId(),
): Promise<CompactionOutcome> {
  const outcome = await runCompaction(turn, step, settings, cause === 'refused', chunkId);
  turn.deps.metrics?.compactions.inc({ outcome, cause });
  turn.deps.logger.info(
    { tabId: turn.session.tabId, turnId: turn.turnId, step, cause, outcome },
    'compaction',
  );
  return outcome;
}

async function runCompaction(
  turn: RunningTurn,
  step: number,
  settings: CompactionSettings,
  blockRefused: boolean,
  chunkId: string,
): Promise<CompactionOutcome> {
  const { deps, session, config, turnId } = turn;
  const signal = turn.cancel.signal;
  const options = stepRequestOptions({
    config,
    defaults: deps.defaults,
    tools: offeredTools(turn),
  });
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) return 'cancelled';
    const chunks = blockRefused ? (compactionAsText(session.log) ?? session.log) : session.log;
    const compaction = buildCompactionRequest({
      ...options,
      chunks,
      ...(settings.instructions === undefined ? {} : { instructions: settings.instructions }),
    });
    if (compaction === undefined) return 'nothing';
    try {
      const answer = await deps.anthropic.beta.messages.create(
        { ...(compaction.request as BetaRequest), betas: [COMPACTION_BETA] },
        { signal },
      );
      turn.usage = addUsage(turn.usage, usageOf(answer.usage));
      const data = compactionDataFromResponse(answer, compaction.throughSeq);
      if (data === undefined) throw new Error('The compaction answer held no compaction block');
      if (signal.aborted) return 'cancelled';
      await session.append([
        { id: chunkId, turnId, step, role: 'assistant', type: 'compaction', data },
      ]);
      // The next request starts over from the block: no earlier figure describes it.
      deps.prompts.forgetFigures(session.tabId);
      return 'compacted';
    } catch (error) {
      if (error instanceof LeaseLostError || session.lost) throw error;
      if (signal.aborted) return 'cancelled';
      if (!blockRefused && isBlockRefusal(error)) {
        deps.logger.warn(
          { err: error, tabId: session.tabId, turnId, step },
          "the API refused the tab's compaction block; compacting from its summary text",
        );
        blockRefused = true;
        continue;
      }
      if (!(await waitToRetry(turn, { error, attempt, step, what: 'compaction failed' }, signal)))
        return 'failed';
    }
  }
}

function usageOf(usage: {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}): Usage {
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
  };
}
