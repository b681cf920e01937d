import {
  emptyUsage,
  type TabConfig,
  type TurnDoneReason,
  toolResultChunk,
} from '@chunklog/chunk-core';
import { inSpan } from '@chunklog/runtime';
import type { TabWaiting } from '@chunklog/store';
import type { CancelWatch } from '../holding/cancel-watch';
import { LeaseLostError } from '../holding/held-tab';
import { type InterruptWatch, wasInterrupted } from '../holding/interrupt-watch';
import type { TabSession } from '../holding/tab-session';
import { buildStepRequest } from '../request/step-request';
import { tabToolSet } from '../tools/tab-tool-set';
import { GEN_AI, usageAttributes } from '../tracing/gen-ai-attributes';
import {
  approvalPolicyOf,
  approvedCalls,
  deniedResult,
  planApprovalRequests,
  planDecisionChunks,
  splitGatedCalls,
} from './approval-plan';
import { compactionSettings, compactTab, wouldPassThreshold } from './compact';
import { callModel, type ModelStepResult } from './model-step';
import {
  continuesAfterStep,
  planFailure,
  planInbox,
  planOpening,
  planStepStart,
  planUnansweredResults,
} from './plan';
import { runTools } from './run-tools';
import type { StepToolCall } from './stream-step';
import {
  checkCancel,
  offeredTools,
  type RunningTurn,
  type TurnDependencies,
  type TurnOutcome,
  type TurnStart,
} from './turn';

/**
 * Runs one turn on a tab whose lease the caller holds: the opening user chunk, then steps
 * (request from the log, model streamed into sealed chunks, tool calls run concurrently,
 * interrupts folded in after the step's results) until the model is done. The cancel
 * generation is read before every model call, so a cancel nobody heard on NATS still stops
 * the turn. turn-done is the caller's, after the release, so a client reacting to it finds the
 * tab idle. Throws LeaseLostError when another worker took the tab: then it must not write.
 */
export function runTurn(input: TurnInput): Promise<TurnOutcome> {
  return inSpan(
    'chunklog.turn',
    {
      attributes: {
        'chunklog.tab_id': input.session.tabId,
        'chunklog.turn_id': input.turnId,
        'chunklog.turn.start': input.start.kind,
        [GEN_AI.conversationId]: input.session.tabId,
      },
    },
    async (span) => {
      const outcome = await runTurnSteps(input);
      span.setAttributes({
        'chunklog.turn.reason': outcome.reason,
        ...usageAttributes(outcome.usage),
      });
      return outcome;
    },
  );
}

interface TurnInput {
  deps: TurnDependencies;
  session: TabSession;
  config: TabConfig;
  turnId: string;
  start: TurnStart;
  cancel: CancelWatch;
  interrupts: InterruptWatch;
}

/** The result given to a tool call that an interrupting message stopped or kept from running. */
export const INTERRUPTED_TOOL_RESULT =
  'The tool call was interrupted by a new message before it finished.';

async function runTurnSteps(input: TurnInput): Promise<TurnOutcome> {
  const { deps, session, turnId, start } = input;
  const exclude = deps.excludeTools ?? [];
  // The worker's own tools until the tab's MCP servers are prepared (a turn that only compacts
  // never prepares them).
  const tools = tabToolSet({ tools: deps.tools, config: input.config, tenant: null, exclude });
  const turn: RunningTurn = { ...input, tools, usage: emptyUsage() };
  const tabId = session.tabId;
  const maxSteps = input.config.maxSteps ?? deps.defaults.maxSteps;
  const signal = input.cancel.signal;
  const finish = (reason: TurnDoneReason): TurnOutcome => ({ reason, usage: turn.usage });

  if (start.kind === 'compact') return runCompactionTurn(turn, start.message);

  let step = 0;
  // A reply cut by the context window is compacted and continued once per turn.
  let recoveredFromWindow = false;
  if (start.kind === 'message') {
    await session.publish({ event: 'turn-start', data: { tabId, turnId } });
    const opening = planOpening(session.log, start.message, turnId);
    if (opening.length > 0) await session.append(opening);
    await session.store.inboxRemove(tabId, [start.message.chunkId]);
  } else if (start.kind === 'approved') {
    step = start.waiting.step;
    if (start.announce) await session.publish({ event: 'turn-start', data: { tabId, turnId } });
  } else {
    step = start.step;
  }
  // A resumed turn takes messages in after its calls' results (resumeApproved).
  if (start.kind !== 'approved') await drainInbox(turn, step === 0 ? 0 : step - 1);
  if (deps.mcp) {
    // Before the first model call, so the tab's MCP tools are in its first request. The
    // tenant decides which secrets the tab's own servers may use, and keeps every server's
    // sessions apart (one statement: the tab's tenant's name).
    const mcpTab = {
      config: input.config,
      tenant: deps.mcp.usesTenant(input.config) ? await session.store.tabTenantName(tabId) : null,
    };
    await deps.mcp.prepare(mcpTab, signal);
    turn.tools = tabToolSet({ tools: deps.tools, mcp: deps.mcp, ...mcpTab, exclude });
  }

  try {
    if (start.kind === 'approved') {
      if ((await resumeApproved(turn, start)) === 'cancelled')
        return finish(await endCancelled(turn, step));
      step++;
    }
    for (; ; step++) {
      // Before every model call, and so after the tab was subscribed to and its log loaded.
      await checkCancel(turn);
      const next = planStepStart({
        step,
        maxSteps,
        cancelled: signal.aborted,
        turnId,
        newId: deps.newId,
      });
      if (next.kind === 'cancelled')
        return finish(await endCancelled(turn, step === 0 ? 0 : step - 1));
      if (next.kind === 'max-steps') {
        await session.append(next.append);
        return finish('max_steps');
      }

      const settings = compactionSettings(turn);
      const request = () =>
        buildStepRequest({
          fold: session.fold,
          config: input.config,
          defaults: deps.defaults,
          tools: offeredTools(turn),
        });
      if (settings.enabled && (await wouldPassThreshold(turn, settings, request))) {
        const compacted = await compactTab(turn, step, settings, 'threshold');
        if (compacted === 'cancelled')
          return finish(await endCancelled(turn, step === 0 ? 0 : step - 1));
      }

      // A message heard of after the latest inbox read joins the turn before the model call.
      while (input.interrupts.pending) await drainInbox(turn, step === 0 ? 0 : step - 1);
      if (signal.aborted) return finish(await endCancelled(turn, step === 0 ? 0 : step - 1));

      const { answer, interrupted, paused } = await runStep(turn, step);
      if (answer.kind === 'cancelled') return finish(await endCancelled(turn, step));
      if (answer.kind === 'failed') {
        await session.append([
          planFailure({ failed: 'model', error: answer.error, turnId, step, newId: deps.newId }),
        ]);
        await answerUnanswered(turn, 'The turn ended with an error before the tool ran.');
        return finish('error');
      }
      // A cancel during the tools (or after a cut) ends the turn; one after a final answer does not.
      if ((answer.toolCalls.length > 0 || interrupted) && signal.aborted)
        return finish(await endCancelled(turn, step));
      if (interrupted) {
        // Cut by a new message: the calls it left (stopped, or sealed and never run) get error
        // results, and the message follows them.
        deps.logger.info({ tabId, turnId, step }, 'step interrupted by a new message');
        await answerUnanswered(turn, INTERRUPTED_TOOL_RESULT);
      }
      if (paused !== null && !interrupted) return finish(await pause(turn, paused));
      const interrupts = await drainInbox(turn, step);
      const stopReason = answer.kind === 'answered' ? answer.stopReason : null;
      if (
        stopReason === 'model_context_window_exceeded' &&
        answer.toolCalls.length === 0 &&
        !recoveredFromWindow
      ) {
        recoveredFromWindow = true;
        const compacted = await compactTab(turn, step, settings, 'too_long');
        if (compacted === 'cancelled') return finish(await endCancelled(turn, step));
        if (compacted === 'compacted') continue;
      }
      const goesOn = continuesAfterStep({
        toolCalls: answer.toolCalls.length,
        stopReason,
        interrupts,
      });
      if (!goesOn) return finish('completed');
    }
  } catch (error) {
    if (error instanceof LeaseLostError || session.lost) throw error;
    // Anything else (a database outage, a bug) still ends the turn visibly when it can.
    deps.logger.error({ err: error, tabId, turnId }, 'turn failed');
    try {
      await session.append([
        planFailure({ failed: 'turn', error, turnId, step, newId: deps.newId }),
      ]);
      await answerUnanswered(turn, 'The turn failed before the tool finished.');
    } catch (appendError) {
      deps.logger.error({ err: appendError, tabId, turnId }, 'could not record the turn failure');
    }
    return finish('error');
  }
}

/**
 * A turn that only compacts the tab (`POST /compact`). The compaction chunk takes the request's
 * chunk id, so a replay compacts nothing more, and its inbox entry goes only once the chunk is
 * stored or given up, so a worker dying mid-way leaves it for the next holder.
 */
async function runCompactionTurn(
  turn: RunningTurn,
  message: { chunkId: string; text: string },
): Promise<TurnOutcome> {
  const { session, turnId, deps } = turn;
  const tabId = session.tabId;
  const chunkId = message.chunkId;
  await session.publish({ event: 'turn-start', data: { tabId, turnId } });
  await checkCancel(turn);
  const settings = compactionSettings(turn);
  const instructions = message.text.trim().length > 0 ? message.text : settings.instructions;
  const outcome = turn.cancel.signal.aborted
    ? 'cancelled'
    : await compactTab(
        turn,
        0,
        { ...settings, ...(instructions === undefined ? {} : { instructions }) },
        'requested',
        chunkId,
      );
  if (outcome === 'failed') {
    await session.append([
      planFailure({
        failed: 'turn',
        error: new Error('The tab could not be compacted'),
        turnId,
        step: 0,
        newId: deps.newId,
      }),
    ]);
  }
  await session.store.inboxRemove(tabId, [chunkId]);
  const reason: TurnDoneReason =
    outcome === 'cancelled' ? 'cancelled' : outcome === 'failed' ? 'error' : 'completed';
  return { reason, usage: turn.usage };
}

/**
 * A step: its model call, then its tool calls, under the step's signal (the turn's cancel, or an
 * interrupting message). `interrupted`: a new message cut the step (its stream, its retry wait or
 * its tools).
 */
async function runStep(
  turn: RunningTurn,
  step: number,
): Promise<{ answer: ModelStepResult; interrupted: boolean; paused: TabWaiting | null }> {
  const signal = turn.interrupts.beginStep(turn.cancel.signal);
  try {
    const answer = await callModel(turn, step, signal);
    let paused: TabWaiting | null = null;
    if (answer.kind === 'answered' && answer.toolCalls.length > 0) {
      const policy = approvalPolicyOf(turn.config, turn.deps.approval);
      const { free, gated } = splitGatedCalls(answer.toolCalls, policy, (name) =>
        turn.tools.has(name),
      );
      // The requests are sealed before the free calls run, so a person sees them at once.
      if (gated.length > 0) paused = await requestApprovals(turn, gated, step);
      await runTools(turn, free, step, signal);
    }
    return { answer, interrupted: wasInterrupted(signal), paused };
  } finally {
    turn.interrupts.endStep();
  }
}

/** Seals the request chunks of a step's waiting calls; returns what the paused turn records. */
async function requestApprovals(
  turn: RunningTurn,
  gated: readonly StepToolCall[],
  step: number,
): Promise<TabWaiting> {
  const inputSchemas = new Map(
    turn.tools
      .describe(gated.map((call) => call.name))
      .map((tool) => [tool.name, tool.input_schema as Record<string, unknown>]),
  );
  const plan = planApprovalRequests({
    gated,
    policy: approvalPolicyOf(turn.config, turn.deps.approval),
    inputSchemas,
    turnId: turn.turnId,
    step,
    cancelGeneration: turn.cancel.generation ?? 0,
    now: Date.now(),
    newId: turn.deps.newId,
  });
  await turn.session.append(plan.append);
  return plan.waiting;
}

/**
 * Pauses the turn once its step's free calls are answered: records what waits (the lease is let
 * go by the holder, with turn-done `awaiting_approval`), and says so live.
 */
async function pause(turn: RunningTurn, waiting: TabWaiting): Promise<TurnDoneReason> {
  const { session } = turn;
  await session.settled();
  const recorded = await session.store.setWaiting(session.tabId, {
    owner: session.owner,
    waiting,
  });
  if (!recorded) throw new LeaseLostError(session.tabId);
  turn.deps.logger.info(
    { tabId: session.tabId, turnId: turn.turnId, calls: waiting.calls.length },
    'turn paused for approval',
  );
  await session.publish({
    event: 'approval-requested',
    data: {
      tabId: session.tabId,
      turnId: turn.turnId,
      calls: waiting.calls.map(({ callId, name, arguments: input }) => ({
        callId,
        name,
        arguments: input,
      })),
      expiresAt: waiting.expiresAt,
    },
  });
  return 'awaiting_approval';
}

/**
 * The first part of a resumed turn: appends the decisions, marks the turn resumed, answers the
 * denied calls and runs the approved ones (with a person's edited input), then takes in waiting
 * messages after their results. 'cancelled' when a cancel stops it first.
 */
async function resumeApproved(
  turn: RunningTurn,
  start: Extract<TurnInput['start'], { kind: 'approved' }>,
): Promise<'resumed' | 'cancelled'> {
  const { session, turnId, deps } = turn;
  const { waiting, decisions, wakeIds } = start;
  const tabId = session.tabId;
  const drafts = planDecisionChunks({ waiting, decisions, log: session.log });
  // The decisions are recorded already: their chunks, the tab's state and the wake-ups go
  // together.
  const [, , resumed] = await Promise.all([
    start.begin(),
    drafts.length > 0 ? session.append(drafts) : undefined,
    session.store.setWaiting(tabId, { owner: session.owner, waiting: null }),
    wakeIds.length > 0 ? session.store.inboxRemove(tabId, wakeIds) : undefined,
  ]);
  if (!resumed) throw new LeaseLostError(tabId);
  for (const decision of decisions) {
    await session.publish({
      event: 'approval-resolved',
      data: {
        tabId,
        turnId,
        callId: decision.callId,
        decision: decision.decision,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      },
    });
  }
  const answered = new Set(
    session.log.flatMap((chunk) => (chunk.type === 'tool_result' ? [chunk.data.callId] : [])),
  );
  const denied = decisions.filter(
    (decision) => decision.decision === 'deny' && !answered.has(decision.callId),
  );
  if (denied.length > 0) {
    const names = new Map(waiting.calls.map((call) => [call.callId, call.name]));
    await session.append(
      denied.map((decision) =>
        toolResultChunk(
          { id: deps.newId(), turnId, step: waiting.step },
          {
            callId: decision.callId,
            name: names.get(decision.callId) ?? 'unknown_tool',
            result: deniedResult(decision.reason),
            isError: true,
          },
        ),
      ),
    );
  }
  // The cancel generation was read as the turn woke (resumePaused); a later one is heard live.
  if (turn.cancel.signal.aborted) return 'cancelled';
  const approved = approvedCalls(waiting, decisions).filter((call) => !answered.has(call.callId));
  const signal = turn.interrupts.beginStep(turn.cancel.signal);
  try {
    if (approved.length > 0) await runTools(turn, approved, waiting.step, signal);
  } finally {
    turn.interrupts.endStep();
  }
  if (turn.cancel.signal.aborted) return 'cancelled';
  if (wasInterrupted(signal)) await answerUnanswered(turn, INTERRUPTED_TOOL_RESULT);
  await drainInbox(turn, waiting.step);
  return 'resumed';
}

/** Appends what waiting messages become after `step` (see planInbox); returns the interrupts. */
async function drainInbox(turn: RunningTurn, step: number): Promise<number> {
  const { session, cancel, deps, interrupts } = turn;
  // Every interrupt heard of before this read is for a message the read finds, or one the log
  // holds already.
  const mark = interrupts.mark();
  const waiting = await session.store.inboxList(session.tabId);
  // A stamp above the turn's own can only come from a cancel made before that message.
  for (const message of waiting) cancel.hear(message.cancelGeneration);
  const plan = planInbox({
    log: session.log,
    waiting,
    cancelledAt: cancel.cancelledAt(),
    turnId: turn.turnId,
    step,
    newId: deps.newId,
  });
  if (plan.append.length > 0) await session.append(plan.append);
  if (plan.remove.length > 0) await session.store.inboxRemove(session.tabId, plan.remove);
  interrupts.handledThrough(mark);
  return plan.interrupts;
}

/** Error results for calls the turn will never answer, so the log builds a valid request. */
async function answerUnanswered(turn: RunningTurn, why: string): Promise<void> {
  // Results already on their way to the log must land first, or a call would get two.
  await turn.session.settled();
  const results = planUnansweredResults(turn.session.log, turn.turnId, why, turn.deps.newId);
  if (results.length > 0) await turn.session.append(results);
}

/** Ends the turn cancelled; `lastStep` is the step whose results waiting interrupts follow. */
async function endCancelled(turn: RunningTurn, lastStep: number): Promise<TurnDoneReason> {
  if (turn.session.lost) throw new LeaseLostError(turn.session.tabId);
  await answerUnanswered(turn, 'Cancelled before the tool finished.');
  // Messages accepted before the cancel are part of what it stopped: their chunks land now,
  // unanswered, rather than each opening a turn that would be cancelled in turn.
  await drainInbox(turn, lastStep);
  return 'cancelled';
}
