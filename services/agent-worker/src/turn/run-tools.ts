import { toolResultChunk } from '@chunklog/chunk-core';
import { inSpan } from '@chunklog/runtime';
import { wasInterrupted } from '../holding/interrupt-watch';
import { secondsSince, type ToolCallOutcome } from '../metrics/worker-metrics';
import type { ToolOutcome } from '../tools/tool-registry';
import { GEN_AI } from '../tracing/gen-ai-attributes';
import { untilSettledOrAborted } from './abortable';
import type { StepToolCall } from './stream-step';
import type { RunningTurn } from './turn';

/**
 * Runs a step's tool calls concurrently, sealing each result as it completes. Returns once all
 * are in, or at once when `signal` (the step's) aborts: a cancel or an interrupting message must
 * not wait for a tool that ignores its abort signal. The calls it stopped are left unanswered,
 * for the caller to answer.
 */
export async function runTools(
  turn: RunningTurn,
  calls: readonly StepToolCall[],
  step: number,
  signal: AbortSignal,
): Promise<void> {
  const { session, turnId } = turn;
  const { tools } = turn;
  const { metrics, newId } = turn.deps;
  const all = Promise.all(
    calls.map((call) => {
      // Names come from the model, and MCP tools' from any tab's servers: only the worker's
      // own become labels and span names, to bound cardinality.
      const tool = !tools.has(call.name)
        ? 'unknown'
        : turn.deps.tools.has(call.name)
          ? call.name
          : 'mcp';
      const attributes = {
        [GEN_AI.operationName]: 'execute_tool',
        [GEN_AI.toolName]: call.name,
        [GEN_AI.toolCallId]: call.callId,
        'chunklog.tab_id': session.tabId,
        'chunklog.turn_id': turnId,
      };
      return inSpan(`execute_tool ${tool}`, { attributes }, async (span) => {
        const startedAt = performance.now();
        const outcome: ToolOutcome =
          call.invalidInput === undefined
            ? await tools.run(call.name, call.arguments, {
                tabId: session.tabId,
                turnId,
                callId: call.callId,
                signal,
              })
            : {
                result: `The tool input was not a JSON object: ${call.invalidInput.slice(0, 500)}`,
                isError: true,
              };
        const toolOutcome: ToolCallOutcome = signal.aborted
          ? wasInterrupted(signal)
            ? 'interrupted'
            : 'cancelled'
          : outcome.isError
            ? 'error'
            : 'ok';
        span.setAttribute('chunklog.tool.outcome', toolOutcome);
        metrics?.toolSeconds.observe({ tool, outcome: toolOutcome }, secondsSince(startedAt));
        // A cut step answers its calls itself; a late result must not land after that.
        if (signal.aborted) return;
        await session.append([
          toolResultChunk(
            { id: newId(), turnId, step },
            {
              callId: call.callId,
              name: call.name,
              result: outcome.result,
              isError: outcome.isError,
            },
          ),
        ]);
      });
    }),
  );
  await untilSettledOrAborted(all, signal);
}
