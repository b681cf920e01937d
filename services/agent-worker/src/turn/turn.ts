import type Anthropic from '@anthropic-ai/sdk';
import type { ApprovalPolicy, TabConfig, TurnDoneReason, Usage } from '@chunklog/chunk-core';
import type { ApprovalDecisionRecord, InboxMessage, TabWaiting } from '@chunklog/store';
import type { Logger } from 'pino';
import type { CancelWatch } from '../holding/cancel-watch';
import type { InterruptWatch } from '../holding/interrupt-watch';
import type { TabSession } from '../holding/tab-session';
import type { McpToolbox } from '../mcp/mcp-toolbox';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import type { ToolSet } from '../tools/tool-registry';
import type { PromptMemory } from './prompt-memory';
import type { RetryPolicy } from './retry-policy';

/** What a turn needs besides the tab it runs on. */
export interface TurnDependencies {
  anthropic: Anthropic;
  /** The worker's own tools (built-in, `task`, served over the bus). */
  tools: ToolSet;
  /** The MCP servers whose tools a turn adds after the worker's own (absent: none). */
  mcp?: McpToolbox;
  newId: () => string;
  logger: Logger;
  retry: RetryPolicy;
  defaults: { model: string; maxSteps: number; maxTokens: number; maxChunkBytes: number };
  /** The deployment's approval policy, for tabs whose config sets none (absent: none waits). */
  approval?: ApprovalPolicy;
  /** Names withheld from this turn's model (the subagent's own `task`, for one). */
  excludeTools?: readonly string[];
  /**
   * The model's context window and the share of it past which a step compacts first (a tab's
   * `config.compaction.threshold` overrides it).
   */
  compaction: { contextWindowTokens: number; threshold: number };
  /** Each tab's latest step response, for diagnostics and the threshold check. */
  prompts: PromptMemory;
  /** Where model, retry and tool figures go (absent: not measured). */
  metrics?: WorkerMetrics;
}

/**
 * How a turn begins: with a new user message, with a request to compact the tab (a turn that
 * only compacts), or by resuming a turn another worker left.
 */
export type TurnStart =
  | { kind: 'message'; message: Pick<InboxMessage, 'chunkId' | 'text'> }
  /** `text`: instructions for this compaction; empty for the tab's own. */
  | { kind: 'compact'; message: Pick<InboxMessage, 'chunkId' | 'text'> }
  | { kind: 'resume'; step: number }
  /**
   * A turn paused for decisions, woken with every waiting call decided (by a person, or denied
   * by the system): it records the decisions, runs the approved calls and goes on.
   */
  | {
      kind: 'approved';
      waiting: TabWaiting;
      decisions: ApprovalDecisionRecord[];
      /** The inbox's wake-ups this resume answers. */
      wakeIds: string[];
      /** Whether this run publishes turn-start (not when it continues a dead holder's run). */
      announce: boolean;
      /** Fixes the cancel generation the turn runs under (TabHolder.beginTurn). */
      begin: () => Promise<void>;
    };

export interface TurnOutcome {
  reason: TurnDoneReason;
  usage: Usage;
}

/** A turn while it runs: what it runs on, and the usage summed so far. */
export interface RunningTurn {
  deps: TurnDependencies;
  session: TabSession;
  config: TabConfig;
  turnId: string;
  /** Decides cancel; its signal also aborts on lease loss (through the session). */
  cancel: CancelWatch;
  /** Cuts the running step when an interrupting message arrives. */
  interrupts: InterruptWatch;
  /** The tools the turn offers and runs (see tabToolSet): withheld ones are in neither. */
  tools: ToolSet;
  usage: Usage;
}

/** The tools a turn's requests offer: the turn's tools the tab's `config.tools` names. */
export function offeredTools(turn: RunningTurn): Anthropic.Tool[] {
  return turn.tools.describe(turn.config.tools);
}

/**
 * Reads the tab's cancel generation into the turn's watch: a cancel recorded while no worker
 * held the tab, or published before its holder listened. A failed read only delays the cancel
 * to the next check.
 */
export async function checkCancel(turn: RunningTurn): Promise<void> {
  try {
    turn.cancel.hear(await turn.session.store.cancelGeneration(turn.session.tabId));
  } catch (error) {
    turn.deps.logger.warn(
      { err: error, tabId: turn.session.tabId, turnId: turn.turnId },
      'cancel check failed',
    );
  }
}
