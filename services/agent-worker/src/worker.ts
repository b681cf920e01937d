import { randomUUID } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type { Bus, Subscription } from '@chunklog/bus';
import {
  type ApprovalPolicy,
  type Chunk,
  defaultRequestDefaults,
  INTAKE_QUEUE,
  type TabConfig,
} from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import type { Logger } from 'pino';
import { createClaimer } from './claim/claim';
import { StoreHealth } from './health/store-health';
import { createTabHolder } from './holding/hold-tab';
import { createIntake } from './intake/intake';
import { MessagesBeingStored } from './intake/messages-being-stored';
import { createMcpToolbox, type McpOptions } from './mcp/mcp-toolbox';
import { createWorkerMetrics, type WorkerMetrics } from './metrics/worker-metrics';
import type { ResolveHost } from './outbound/guarded-agent';
import { maxChunkBytes } from './request/max-chunk-bytes';
import { serveRequestOptions } from './request/serve-request-options';
import {
  buildStepRequest,
  type StepRequestInput,
  stepRequestOptions,
} from './request/step-request';
import { createSubagentRunner } from './subagents/run-subagent';
import { createTaskTool } from './subagents/task-tool';
import { builtinTools } from './tools/builtin-tools';
import { createRemoteToolDirectory } from './tools/remote-tools';
import { tabToolSet } from './tools/tab-tool-set';
import { createToolRegistry, type ToolDefinition } from './tools/tool-registry';
import { PromptMemory } from './turn/prompt-memory';
import { defaultRetryPolicy, type RetryPolicy } from './turn/retry-policy';
import type { TurnDependencies } from './turn/turn';
import {
  defaultWebhookDispatchOptions,
  type WebhookDispatchOptions,
} from './webhooks/webhook-dispatch-options';
import { createWebhookDispatcher } from './webhooks/webhook-dispatcher';

/** Everything a worker is made of; tests and the all-in-one mode pass their own. */
export interface WorkerDependencies {
  store: ChunkStore;
  bus: Bus;
  /** An SDK client; the worker owns retries, so give it `maxRetries: 0`. */
  anthropic: Anthropic;
  /** Unique per process: it is the lease owner. */
  workerId: string;
  /** How long a lease lasts unrenewed: the takeover delay after a crash. */
  leaseMs: number;
  maxSteps: number;
  model: string;
  /** Which tool calls wait for a person, for tabs whose config sets no policy (default: none). */
  approval?: ApprovalPolicy;
  maxTokens?: number;
  logger: Logger;
  /** Local tools (default: the built-ins). The `task` tool is always added. */
  tools?: ToolDefinition<unknown>[];
  /** Offer tools announced on the bus (default true). */
  remoteTools?: boolean;
  /** MCP servers for every tab, and how secret references are resolved (tabs name their own). */
  mcp?: McpOptions;
  clock?: { now(): number };
  ids?: () => string;
  retry?: RetryPolicy;
  /** How often to look for tabs with expired leases or waiting messages (default leaseMs / 4). */
  sweepMs?: number;
  /** How long stop() lets running turns finish before leaving them to a takeover. */
  stopTimeoutMs?: number;
  /** The model's context window in tokens (default 200,000). */
  contextWindowTokens?: number;
  /** Compact before a step whose request would pass this share of the window (default 0.8). */
  compactionThreshold?: number;
  /** Prometheus instruments (default: on a private registry nobody scrapes). */
  metrics?: WorkerMetrics;
  /** How the webhook outbox is dispatched (default: the WEBHOOK_* defaults); false: not here. */
  webhooks?: WebhookDispatchOptions | false;
  /**
   * How the host names of webhook endpoints and tabs' MCP servers are resolved before their
   * addresses are checked (default: the system's resolver); tests point names where they please.
   */
  resolveHost?: ResolveHost;
}

export interface Worker {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Tabs this worker holds right now. */
  runningTabs(): string[];
  /**
   * Whether the store answered lately (a store call failed for want of the database since the
   * last one that went through: `unreachable`). The worker stays up through an outage: its turns
   * and intake wait for the store and go on once it is back.
   */
  health(): WorkerHealth;
  /**
   * The request a tab's next step would send: this worker's defaults and tools (remote ones
   * included) over the tab's settings. A gateway composed in-process serves it as `/context`;
   * a gateway on the bus asks any worker for the same options (REQUEST_OPTIONS_SUBJECT).
   */
  nextRequest(input: {
    config: TabConfig;
    log: readonly Chunk[];
    /** The name of the tab's tenant; without it the tab's own MCP servers are left out. */
    tenant?: string | null;
  }): Anthropic.MessageCreateParamsNonStreaming;
}

export interface WorkerHealth {
  store: 'reachable' | 'unreachable';
  /** How long the store has been unreachable. */
  unreachableForMs?: number;
}

/**
 * The agent worker (docs/architecture.md, "Turns, leases and takeover"): takes messages from
 * the durable intake queue into the tab's inbox, runs one turn at a time per tab under a
 * Postgres lease, and takes over tabs whose worker died.
 */
export function createWorker(deps: WorkerDependencies): Worker {
  const { store, bus, workerId, leaseMs } = deps;
  const logger = deps.logger.child({ workerId });
  const ids = deps.ids ?? randomUUID;
  const metrics = deps.metrics ?? createWorkerMetrics();
  const sweepMs = deps.sweepMs ?? Math.max(100, Math.floor(leaseMs / 4));
  const subscriptions: Subscription[] = [];
  let sweeper: ReturnType<typeof setInterval> | undefined;
  let stopping = false;
  const isStopping = () => stopping;
  const health = new StoreHealth(deps.clock ? () => deps.clock!.now() : Date.now);

  const registry = createToolRegistry(deps.tools ?? builtinTools());
  const mcp = createMcpToolbox({
    ...deps.mcp,
    ...(deps.resolveHost ? { resolveHost: deps.resolveHost } : {}),
    logger: logger.child({ component: 'mcp' }),
    ...(deps.clock ? { now: () => deps.clock!.now() } : {}),
  });
  const contextWindowTokens = deps.contextWindowTokens ?? 200_000;
  const defaults = {
    model: deps.model,
    maxSteps: deps.maxSteps,
    maxTokens: deps.maxTokens ?? defaultRequestDefaults.maxTokens,
    maxChunkBytes: maxChunkBytes(contextWindowTokens),
  };
  /**
   * What this worker builds a tab's step requests from: its defaults and its tools now. Nothing
   * is withheld: a tab's next turn is a turn of its own, never a subagent's.
   */
  const stepRequestInput = (config: TabConfig, tenant: string | null): StepRequestInput => ({
    config,
    defaults,
    tools: tabToolSet({ tools: registry, mcp, config, tenant }).describe(config.tools),
  });
  const turnDependencies: TurnDependencies = {
    anthropic: deps.anthropic,
    tools: registry,
    mcp,
    newId: ids,
    logger: logger.child({ component: 'turn' }),
    retry: deps.retry ?? defaultRetryPolicy,
    ...(deps.approval === undefined ? {} : { approval: deps.approval }),
    metrics,
    defaults,
    compaction: {
      contextWindowTokens,
      threshold: deps.compactionThreshold ?? 0.8,
    },
    prompts: new PromptMemory(),
  };
  const webhooks =
    deps.webhooks === false
      ? null
      : createWebhookDispatcher({
          outbox: store,
          logger: logger.child({ component: 'webhooks' }),
          options: deps.webhooks ?? defaultWebhookDispatchOptions,
          metrics,
          ...(deps.resolveHost ? { resolveHost: deps.resolveHost } : {}),
        });
  const holder = createTabHolder({
    store,
    bus,
    logger: logger.child({ component: 'holding' }),
    metrics,
    health,
    workerId,
    leaseMs,
    foldOptions: { maxChunkBytes: defaults.maxChunkBytes },
    stopping: isStopping,
    turnEnded: () => webhooks?.nudge(),
  });
  const beingStored = new MessagesBeingStored();
  const claimer = createClaimer({
    store,
    logger: logger.child({ component: 'claim' }),
    metrics,
    holder,
    workerId,
    leaseMs,
    ids,
    turnDependencies,
    stopping: isStopping,
    messagesStored: (tabId) => beingStored.settled(tabId),
  });
  const intake = createIntake({
    store,
    logger: logger.child({ component: 'intake' }),
    health,
    claim: claimer.claim,
    refuse: claimer.refuse,
    stopping: isStopping,
    beingStored,
  });
  registry.add(
    createTaskTool(
      createSubagentRunner({ store, holder, ids, turnDependencies }),
    ) as ToolDefinition<unknown>,
  );
  // Created after every local tool is in, so none of them can be shadowed by a remote one.
  const remote = createRemoteToolDirectory({
    bus,
    registry,
    ...(deps.clock ? { now: () => deps.clock!.now() } : {}),
  });

  /** Claims tabs with expired leases or idle tabs with waiting messages. */
  async function sweep(): Promise<void> {
    let tabs: string[];
    try {
      tabs = await store.tabsNeedingWork(50);
    } catch (error) {
      // Said once per outage, not at every sweep.
      if (health.reachable) logger.warn({ err: error }, 'sweep failed');
      health.report(error);
      return;
    }
    health.report();
    for (const tabId of tabs) await claimer.claim(tabId);
  }

  return {
    async start() {
      stopping = false;
      if (deps.remoteTools ?? true) await remote.start();
      mcp.start();
      subscriptions.push(
        await serveRequestOptions(bus, async ({ tabId, config }) => {
          const tenant = config.mcpServers?.length ? await store.tabTenantName(tabId) : null;
          return stepRequestOptions(stepRequestInput(config, tenant));
        }),
      );
      subscriptions.push(await bus.consume(INTAKE_QUEUE, intake, { concurrency: 4 }));
      sweeper = setInterval(() => void sweep(), sweepMs);
      void sweep();
      webhooks?.start();
      logger.info({ leaseMs, tools: registry.names() }, 'worker started');
    },
    async stop() {
      stopping = true;
      if (sweeper) clearInterval(sweeper);
      await Promise.allSettled(subscriptions.splice(0).map((subscription) => subscription.stop()));
      await remote.stop();
      await webhooks?.stop();
      const deadline = new Promise((resolve) => {
        const timer = setTimeout(resolve, deps.stopTimeoutMs ?? 10_000);
        timer.unref?.();
      });
      await Promise.race([claimer.settled(), deadline]);
      // Turns still running are left to a takeover once their leases lapse.
      for (const session of holder.sessions.values()) session.markLost('worker stopping');
      await claimer.settled();
      await mcp.close();
      logger.info('worker stopped');
    },
    runningTabs: () => [...holder.sessions.keys()],
    health: () => health.snapshot(),
    nextRequest: ({ config, log, tenant }) =>
      buildStepRequest({ log, ...stepRequestInput(config, tenant ?? null) }),
  };
}
