import { randomUUID } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type { Bus, Subscription, WorkItem } from '@chunklog/bus';
import {
  CancelCommandSchema,
  type Chunk,
  cancelSubject,
  emptyUsage,
  INTAKE_QUEUE,
  InvalidInputError,
  MessageCommandSchema,
  NotFoundError,
  REQUEST_OPTIONS_QUEUE,
  REQUEST_OPTIONS_SUBJECT,
  RequestOptionsQuerySchema,
  snapshotSubject,
  type TabConfig,
} from '@chunklog/chunk-core';
import type { AcquireLeaseResult, ChunkStore, InboxMessage } from '@chunklog/store';
import { CancelWatch } from './holding/cancel-watch';
import { LeaseLostError, TabSession } from './holding/tab-session';
import type { Logger } from './logger';
import { createWorkerMetrics, type WorkerMetrics } from './metrics/worker-metrics';
import {
  buildStepRequest,
  type StepRequestInput,
  stepRequestOptions,
} from './request/step-request';
import { createTaskTool, type SubagentRunner } from './subagents/task-tool';
import { builtinTools } from './tools/builtin-tools';
import { createRemoteToolDirectory } from './tools/remote-tools';
import { createToolRegistry, type ToolDefinition } from './tools/tool-registry';
import { defaultRetryPolicy, type RetryPolicy } from './turn/retry-policy';
import { planTakeover } from './turn/takeover';
import { runTurn, type TurnDependencies, type TurnOutcome } from './turn/turn-runner';

/** Raised when a fenced append fails although this worker still holds the lease. */
class StaleWriterError extends Error {
  constructor(tabId: string) {
    super(`Another writer appended to tab ${tabId} while this worker held it`);
    this.name = 'StaleWriterError';
  }
}

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
  maxTokens?: number;
  logger: Logger;
  /** Local tools (default: the built-ins). The `task` tool is always added. */
  tools?: ToolDefinition<unknown>[];
  /** Offer tools announced on the bus (default true). */
  remoteTools?: boolean;
  clock?: { now(): number };
  ids?: () => string;
  retry?: RetryPolicy;
  /** How often to look for tabs with expired leases or waiting messages (default leaseMs / 4). */
  sweepMs?: number;
  /** How long stop() lets running turns finish before leaving them to a takeover. */
  stopTimeoutMs?: number;
  /** Prometheus instruments (default: on a private registry nobody scrapes). */
  metrics?: WorkerMetrics;
}

export interface Worker {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Tabs this worker holds right now. */
  runningTabs(): string[];
  /**
   * The request a tab's next step would send: this worker's defaults and tools (remote ones
   * included) over the tab's settings. A gateway composed in-process serves it as `/context`;
   * a gateway on the bus asks any worker for the same options (REQUEST_OPTIONS_SUBJECT).
   */
  nextRequest(input: {
    config: TabConfig;
    log: readonly Chunk[];
  }): Anthropic.MessageCreateParamsNonStreaming;
}

/**
 * The agent worker (DESIGN sections 5, 8, 9): takes messages from the durable intake queue
 * into the tab's inbox, runs one turn at a time per tab under a Postgres lease, and takes
 * over tabs whose worker died.
 */
export function createWorker(deps: WorkerDependencies): Worker {
  const { store, bus, logger, workerId, leaseMs } = deps;
  const ids = deps.ids ?? randomUUID;
  const metrics = deps.metrics ?? createWorkerMetrics();
  const sweepMs = deps.sweepMs ?? Math.max(100, Math.floor(leaseMs / 4));
  const sessions = new Map<string, TabSession>();
  /** Tabs being claimed or held by this worker, from before the lease call until the run ends. */
  const claimed = new Set<string>();
  const running = new Set<Promise<void>>();
  const subscriptions: Subscription[] = [];
  let sweeper: ReturnType<typeof setInterval> | undefined;
  let stopping = false;

  const registry = createToolRegistry(deps.tools ?? builtinTools());
  const defaults = {
    model: deps.model,
    maxSteps: deps.maxSteps,
    maxTokens: deps.maxTokens ?? 4096,
  };
  /** What this worker builds a tab's step requests from: its defaults and its tools now. */
  const stepRequestInput = (config: TabConfig): StepRequestInput => ({
    config,
    defaults,
    tools: registry.describe(config.tools),
  });
  const turnDependencies = (excludeTools?: string[]): TurnDependencies => ({
    store,
    anthropic: deps.anthropic,
    tools: registry,
    newId: ids,
    logger,
    retry: deps.retry ?? defaultRetryPolicy,
    metrics,
    defaults,
    ...(excludeTools ? { excludeTools } : {}),
  });

  /**
   * Runs `body` while holding the tab: renews the lease, answers snapshots, obeys cancel. Called
   * right after the lease is acquired: renewal starts before the log loads, so a long log never
   * lets the lease lapse into a takeover.
   */
  async function holdTab(
    tabId: string,
    turnId: string,
    body: (session: TabSession, cancel: CancelWatch) => Promise<TurnOutcome | null>,
    parentSignal?: AbortSignal,
  ): Promise<TurnOutcome | null> {
    const cancel = new CancelWatch();
    const abortTurn = () => cancel.abort();
    let session: TabSession | null = null;
    let lostWhileLoading = false;
    const renewer = setInterval(
      () => {
        store.renewLease(tabId, { owner: workerId, leaseMs }).then(
          (renewed) => {
            if (renewed) return;
            if (session) session.markLost();
            else lostWhileLoading = true;
          },
          (error) => logger.warn('lease renewal failed; retrying', { tabId, error }),
        );
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    const held: Subscription[] = [];
    try {
      // Listening before the log is read: the tab shows as running from the lease on, and a
      // cancel sent then must not fall in the gap while a long log loads. One published before
      // this subscription is found in the store before the first model call.
      held.push(
        await bus.subscribe(cancelSubject(tabId), (payload) => {
          const command = CancelCommandSchema.safeParse(payload);
          cancel.hear(command.success ? command.data.generation : undefined);
        }),
      );
      const log = await store.readAll(tabId);
      if (lostWhileLoading) throw new LeaseLostError(tabId);
      const current = new TabSession(tabId, log, store, bus, logger, metrics);
      session = current;
      sessions.set(tabId, current);
      metrics.runningTurns.inc();
      current.lifetime.signal.addEventListener('abort', abortTurn, { once: true });
      parentSignal?.addEventListener('abort', abortTurn, { once: true });
      if (parentSignal?.aborted) abortTurn();
      held.push(await bus.serve(snapshotSubject(tabId), async () => current.snapshot()));
      const outcome = await body(current, cancel);
      clearInterval(renewer);
      logger.debug('turn over; releasing', { tabId, turnId, reason: outcome?.reason });
      const usage = outcome?.usage ?? emptyUsage();
      const released = await store.releaseLease(tabId, { owner: workerId, usage });
      if (!released) throw new LeaseLostError(tabId);
      if (outcome) {
        metrics.turns.inc({ reason: outcome.reason });
        metrics.tokens.inc({ kind: 'input' }, usage.inputTokens);
        metrics.tokens.inc({ kind: 'output' }, usage.outputTokens);
        metrics.tokens.inc({ kind: 'cache_read' }, usage.cacheReadInputTokens);
        metrics.tokens.inc({ kind: 'cache_write' }, usage.cacheCreationInputTokens);
        await current.publish({
          event: 'turn-done',
          data: { tabId, turnId, reason: outcome.reason, usage },
        });
      }
      return outcome;
    } catch (error) {
      if (error instanceof LeaseLostError || session?.lost) {
        // A conflict while the lease is still ours means a stale writer (a worker that was
        // paused past its lease) appended first: the caller re-reads the log and repairs.
        const lease = stopping ? null : await store.getLease(tabId).catch(() => null);
        if (lease?.owner === workerId) throw new StaleWriterError(tabId);
        logger.warn('turn abandoned: another worker holds the tab', { tabId, turnId });
        return null;
      }
      throw error;
    } finally {
      clearInterval(renewer);
      parentSignal?.removeEventListener('abort', abortTurn);
      if (session) {
        sessions.delete(tabId);
        metrics.runningTurns.dec();
      }
      await Promise.allSettled(held.map((subscription) => subscription.stop()));
    }
  }

  /**
   * Fixes the cancel generation the turn runs under, in the store first (a worker taking the
   * turn over reads it there) and then for this worker's cancel checks.
   */
  async function beginTurn(tabId: string, cancel: CancelWatch, cancelGeneration: number) {
    const recorded = await store.setTurnCancelGeneration(tabId, {
      owner: workerId,
      cancelGeneration,
    });
    if (!recorded) throw new LeaseLostError(tabId);
    cancel.begin(cancelGeneration);
  }

  /** The `task` tool's engine: a child tab, one turn through the same path, its final text. */
  const runSubagent: SubagentRunner = async ({ parentTabId, prompt, title, signal }) => {
    const parent = await store.getTab(parentTabId);
    const tenantId = await store.tabTenant(parentTabId);
    if (!tenantId) throw new NotFoundError(`Tab ${parentTabId} not found`);
    const child = await store.createTab({
      tenantId,
      parentTabId,
      title: title ?? prompt.slice(0, 80),
      config: parent.config,
    });
    const turnId = ids();
    const lease = await store.acquireLease(child.id, { owner: workerId, turnId, leaseMs });
    if (!lease.acquired) throw new Error(`Could not take the new child tab ${child.id}`);
    let log: Chunk[] = [];
    const outcome = await holdTab(
      child.id,
      turnId,
      async (session, cancel) => {
        // A brand-new tab: any cancel of it stops the subagent.
        await beginTurn(child.id, cancel, 0);
        const result = await runTurn({
          deps: turnDependencies(['task']),
          session,
          config: lease.tab.config,
          turnId,
          start: { kind: 'message', message: { chunkId: ids(), text: prompt } },
          cancel,
        });
        log = session.log;
        return result;
      },
      signal,
    );
    const lastStep = Math.max(-1, ...log.filter((c) => c.role === 'assistant').map((c) => c.step));
    const answer = log
      .filter((c) => c.role === 'assistant' && c.type === 'text' && c.step === lastStep)
      .map((c) => (c.type === 'text' ? c.data.text : ''))
      .join('\n');
    return { tabId: child.id, answer, reason: outcome?.reason ?? 'error' };
  };
  registry.add(createTaskTool(runSubagent) as ToolDefinition<unknown>);
  // Created after every local tool is in, so none of them can be shadowed by a remote one.
  const remote = createRemoteToolDirectory({
    bus,
    registry,
    ...(deps.clock ? { now: () => deps.clock!.now() } : {}),
  });

  /** After another worker died mid-turn: answer its open calls, say so, and go on if possible. */
  async function takeOver(
    session: TabSession,
    cancel: CancelWatch,
    config: AcquireLeaseResult['tab']['config'],
    turnId: string,
    previousOwner: string,
  ): Promise<TurnOutcome | null> {
    const plan = planTakeover({
      log: session.log,
      turnId,
      previousOwner,
      workerId,
      newId: ids,
    });
    await session.append(plan.append);
    if (plan.resumeStep === null) return { reason: 'error', usage: emptyUsage() };
    return runTurn({
      deps: turnDependencies(),
      session,
      config,
      turnId,
      start: { kind: 'resume', step: plan.resumeStep },
      cancel,
    });
  }

  async function runLeased(tabId: string, lease: AcquireLeaseResult, turnId: string) {
    let takenOver = lease.takenOver;
    const activeTurnId = takenOver?.turnId ?? turnId;
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await runHeld(takenOver);
          break;
        } catch (error) {
          if (!(error instanceof StaleWriterError) || attempt >= 3) throw error;
          logger.warn('a stale writer appended to a tab this worker holds; repairing', { tabId });
          takenOver = { turnId: activeTurnId, owner: 'a stale writer' };
        }
      }
    } catch (error) {
      logger.error('tab run failed', { tabId, error });
    } finally {
      claimed.delete(tabId);
    }
    // A message that arrived as the turn ended found the tab still held: look again.
    if (stopping) return;
    try {
      const waiting = await store.inboxList(tabId);
      if (waiting.length > 0) await claim(tabId);
    } catch (error) {
      logger.warn('inbox check failed; the sweep will retry', { tabId, error });
    }

    function runHeld(takenOver: AcquireLeaseResult['takenOver']) {
      return holdTab(tabId, activeTurnId, async (session, cancel) => {
        if (takenOver && session.log.some((chunk) => chunk.turnId === takenOver.turnId)) {
          logger.info('taking over a turn', { tabId, turnId: activeTurnId, from: takenOver.owner });
          // The generation the dead holder recorded, so a cancel sent since still applies; when
          // none was recorded (a turn begun before cancel generations existed), the current one.
          const recorded = (await store.getLease(tabId))?.cancelGeneration ?? null;
          await beginTurn(tabId, cancel, recorded ?? (await store.cancelGeneration(tabId)));
          return takeOver(session, cancel, lease.tab.config, activeTurnId, takenOver.owner);
        }
        // The oldest stamp first: a message accepted before a cancel opens (and ends) the
        // cancelled turn even when the intake stored a later one first.
        const opener = (await store.inboxList(tabId)).reduce<InboxMessage | undefined>(
          (oldest, message) =>
            oldest === undefined || message.cancelGeneration < oldest.cancelGeneration
              ? message
              : oldest,
          undefined,
        );
        if (!opener) return null;
        // Recorded before the opener's chunk is written, so a takeover always finds it.
        await beginTurn(tabId, cancel, opener.cancelGeneration);
        return runTurn({
          deps: turnDependencies(),
          session,
          config: lease.tab.config,
          turnId: activeTurnId,
          start: { kind: 'message', message: opener },
          cancel,
        });
      });
    }
  }

  /** Tries to take a tab's lease and run it; a tab another worker holds is left to that one. */
  async function claim(tabId: string): Promise<void> {
    // Checked and marked synchronously: the store treats a second acquire by the same owner for
    // the same turn as a renewal, so two claims racing in one worker would both "win".
    if (stopping || claimed.has(tabId)) {
      logger.debug('claim skipped: tab busy here', { tabId });
      return;
    }
    claimed.add(tabId);
    let launched = false;
    try {
      const tab = await store.getTab(tabId);
      // Passing the running turn's id lets a takeover keep it as the tab's active turn.
      const runningTurnId = tab.status === 'running' && tab.activeTurnId ? tab.activeTurnId : null;
      let turnId = runningTurnId ?? ids();
      let lease = await store.acquireLease(tabId, { owner: workerId, turnId, leaseMs });
      if (lease.acquired && runningTurnId !== null && !lease.takenOver) {
        // The turn read above ended before the acquire, so this lease starts a fresh turn on an
        // idle tab, which must not reuse the finished turn's id (clients would see that id start
        // and finish twice). Give the lease back and take it under a new id.
        await store.releaseLease(tabId, { owner: workerId, usage: emptyUsage() });
        turnId = ids();
        lease = await store.acquireLease(tabId, { owner: workerId, turnId, leaseMs });
      }
      if (!lease.acquired) {
        // Nothing to hand over: the holder drains interrupts at every step and looks at the
        // inbox again after releasing the lease, and the sweep finds idle tabs with messages.
        logger.debug('tab held elsewhere', { tabId });
        return;
      }
      logger.debug('lease acquired', { tabId, turnId, takenOver: lease.takenOver });
      if (lease.takenOver) metrics.takeovers.inc();
      const run = runLeased(tabId, lease, turnId);
      launched = true;
      running.add(run);
      void run.finally(() => running.delete(run));
    } catch (error) {
      if (!(error instanceof NotFoundError)) logger.warn('claim failed', { tabId, error });
    } finally {
      if (!launched) claimed.delete(tabId);
    }
  }

  async function intake(item: WorkItem): Promise<void> {
    const parsed = MessageCommandSchema.safeParse(item.data);
    if (!parsed.success) {
      logger.error('malformed intake message dropped', { error: parsed.error.message });
      await item.ack();
      return;
    }
    const { tabId, chunkId, text, mode, cancelGeneration } = parsed.data;
    try {
      // Idempotent by chunkId: a redelivered message finds itself stored and changes nothing.
      // Items are stored concurrently (here and by other workers), so one accepted later can be
      // stored first: the item's queue sequence keeps the inbox in the order they were accepted.
      await store.inboxPut({
        tabId,
        chunkId,
        text,
        mode,
        intakeSeq: item.sequence,
        ...(cancelGeneration === undefined ? {} : { cancelGeneration }),
      });
    } catch (error) {
      // A deleted tab or a message the store can never hold will not get better by waiting.
      const permanent = error instanceof NotFoundError || error instanceof InvalidInputError;
      if (permanent || item.deliveryCount >= 10) {
        logger.warn('intake message dropped', { tabId, chunkId, error });
        await item.ack();
        return;
      }
      await item.nak(1000);
      return;
    }
    // Acked only once durable in Postgres: from here the inbox (and the sweep) own it.
    await item.ack();
    await claim(tabId);
  }

  async function sweep(): Promise<void> {
    try {
      for (const tabId of await store.tabsNeedingWork(50)) await claim(tabId);
    } catch (error) {
      logger.warn('sweep failed', { error });
    }
  }

  return {
    async start() {
      stopping = false;
      if (deps.remoteTools ?? true) await remote.start();
      // Any worker answers for any tab: the options depend on the tab's config, not on its holder.
      subscriptions.push(
        await bus.serve(
          REQUEST_OPTIONS_SUBJECT,
          async (payload) => {
            const query = RequestOptionsQuerySchema.safeParse(payload);
            if (!query.success) {
              throw new InvalidInputError(
                `Malformed request-options query: ${query.error.message}`,
              );
            }
            return { options: stepRequestOptions(stepRequestInput(query.data.config)) };
          },
          { queue: REQUEST_OPTIONS_QUEUE },
        ),
      );
      subscriptions.push(await bus.consume(INTAKE_QUEUE, intake, { concurrency: 4 }));
      sweeper = setInterval(() => void sweep(), sweepMs);
      void sweep();
      logger.info('worker started', { workerId, leaseMs, tools: registry.names() });
    },
    async stop() {
      stopping = true;
      if (sweeper) clearInterval(sweeper);
      await Promise.allSettled(subscriptions.splice(0).map((subscription) => subscription.stop()));
      await remote.stop();
      const deadline = new Promise((resolve) => {
        const timer = setTimeout(resolve, deps.stopTimeoutMs ?? 10_000);
        timer.unref?.();
      });
      await Promise.race([Promise.allSettled([...running]), deadline]);
      // Turns still running are left to a takeover once their leases lapse.
      for (const session of sessions.values()) session.markLost('worker stopping');
      await Promise.allSettled([...running]);
      logger.info('worker stopped', { workerId });
    },
    runningTabs: () => [...sessions.keys()],
    nextRequest: ({ config, log }) => buildStepRequest({ log, ...stepRequestInput(config) }),
  };
}
