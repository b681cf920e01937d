import { emptyUsage, errorChunk, type MessageCommand, NotFoundError } from '@chunklog/chunk-core';
import type { AcquireLeaseResult, InboxStore, LeaseStore, TabStore } from '@chunklog/store';
import type { Logger } from 'pino';
import type { CancelWatch } from '../holding/cancel-watch';
import type { HeldTab } from '../holding/held-tab';
import { StaleWriterError, type TabHolder } from '../holding/hold-tab';
import type { InterruptWatch } from '../holding/interrupt-watch';
import type { TabSession } from '../holding/tab-session';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { hasWork, planResume } from '../turn/approval-plan';
import { pickOpener } from '../turn/plan';
import { planTakeover } from '../turn/takeover';
import type { TurnDependencies, TurnOutcome } from '../turn/turn';
import { runTurn } from '../turn/turn-runner';

/**
 * What claiming reads before a tab is held (and after it is let go): whether it has work, and
 * whose its lease is. Everything done while it is held goes through its HeldTab.
 */
export type ClaimStore = Pick<TabStore, 'getTab'> &
  Pick<InboxStore, 'inboxList'> &
  Pick<LeaseStore, 'getLease' | 'renewLease'>;

/** The message whose storing in the inbox led to a claim. */
export type StoredMessage = Pick<MessageCommand, 'chunkId' | 'mode' | 'cancelGeneration'>;

export interface Claimer {
  /**
   * Tries to take a tab's lease and run it; a tab another worker holds is left to that one.
   * `stored` is the message just stored for it, if any: an `interrupt` is first announced to the
   * tab's holder (this worker, or another), which cuts the step it is running.
   */
  claim(tabId: string, stored?: StoredMessage): Promise<void>;
  /**
   * Ends a message the store refuses as a visible error in its tab: a turn of its own holding
   * one `error` chunk (with the message's id, so doing it twice writes it once), then turn-done
   * `error`. False when the tab is busy (held here or elsewhere, or owed a takeover, which this
   * starts): the caller tries again later.
   */
  refuse(tabId: string, chunkId: string, why: string): Promise<boolean>;
  /** Resolves once every run launched so far has ended. */
  settled(): Promise<void>;
}

/**
 * Claiming tabs: takes a tab's turn lease and runs what it holds: a turn left by a worker that
 * died (continued from the log), else the next waiting message's turn. Looks at the inbox again
 * after each run, for a message that arrived as the turn ended.
 */
export function createClaimer(deps: {
  store: ClaimStore;
  logger: Logger;
  metrics: WorkerMetrics;
  holder: TabHolder;
  workerId: string;
  leaseMs: number;
  ids: () => string;
  turnDependencies: TurnDependencies;
  stopping: () => boolean;
  /** Resolves once the tab's messages this worker's intake is storing now are in the inbox. */
  messagesStored: (tabId: string) => Promise<void>;
}): Claimer {
  const { store, logger, metrics, holder, workerId, leaseMs, ids } = deps;
  /** Tabs being claimed or held by this worker, from before the lease call until the run ends. */
  const claimed = new Set<string>();
  const running = new Set<Promise<void>>();

  async function claim(tabId: string, stored?: StoredMessage): Promise<void> {
    if (stored?.mode === 'interrupt') {
      await holder.announceInterrupt({
        tabId,
        chunkId: stored.chunkId,
        ...(stored.cancelGeneration === undefined
          ? {}
          : { cancelGeneration: stored.cancelGeneration }),
      });
    }
    // Checked and marked synchronously: the store treats a second acquire by the same owner for
    // the same turn as a renewal, so two claims racing in one worker would both "win".
    if (deps.stopping() || claimed.has(tabId) || holder.holds(tabId)) {
      logger.debug({ tabId }, 'claim skipped: tab busy here');
      return;
    }
    claimed.add(tabId);
    let launched = false;
    try {
      const tab = await store.getTab(tabId);
      // An idle tab with nothing waiting has no turn to run: a message delivered again after
      // its turn took it, say. Leased anyway, it would show as running for nothing. A message
      // stored after this look claims the tab itself once stored.
      if (tab.status !== 'running' && !hasWork(tab, await store.inboxList(tabId))) {
        logger.debug({ tabId }, 'claim skipped: nothing waiting');
        return;
      }
      // Passing the running turn's id lets a takeover keep it as the tab's active turn.
      const runningTurnId = tab.status === 'running' && tab.activeTurnId ? tab.activeTurnId : null;
      // A paused turn resumes under its own id.
      const pausedTurnId = tab.status === 'waiting' ? (tab.waiting?.turnId ?? null) : null;
      if (runningTurnId !== null && (await reclaimLostTurn(tabId, runningTurnId))) {
        logger.info({ tabId, turnId: runningTurnId }, 'taking up a turn this worker lost');
        metrics.takeovers.inc();
        // The tab read above is the lease's: a takeover from this very worker.
        const held = holder.heldTab(tabId);
        const waiting = tab.waiting === null ? null : await held.store.getWaiting(tabId);
        const lost = {
          acquired: true,
          takenOver: { turnId: runningTurnId, owner: workerId },
          tab,
          waiting,
        };
        launch(held, lost, runningTurnId);
        launched = true;
        return;
      }
      let turnId = runningTurnId ?? pausedTurnId ?? ids();
      let { lease, held } = await holder.acquire(tabId, turnId);
      const resumedElsewhere = pausedTurnId !== null && lease.tab.waiting?.turnId !== pausedTurnId;
      if (held && (runningTurnId !== null || resumedElsewhere) && !lease.takenOver) {
        // The turn read above ended before the acquire, so this lease starts a fresh turn on an
        // idle tab, which must not reuse the finished turn's id (clients would see that id start
        // and finish twice). Give the lease back and take it under a new id.
        await held.store.releaseLease(tabId, { owner: workerId, usage: emptyUsage() });
        turnId = ids();
        ({ lease, held } = await holder.acquire(tabId, turnId));
      }
      if (!held) {
        // Nothing to hand over: the holder drains interrupts at every step and looks at the
        // inbox again after releasing the lease, and the sweep finds idle tabs with messages.
        logger.debug({ tabId }, 'tab held elsewhere');
        return;
      }
      logger.debug({ tabId, turnId, takenOver: lease.takenOver }, 'lease acquired');
      if (lease.takenOver) metrics.takeovers.inc();
      launch(held, lease, turnId);
      launched = true;
    } catch (error) {
      if (!(error instanceof NotFoundError)) logger.warn({ err: error, tabId }, 'claim failed');
    } finally {
      if (!launched) claimed.delete(tabId);
    }
  }

  function launch(held: HeldTab, lease: AcquireLeaseResult, turnId: string): void {
    const run = runLeased(held, lease, turnId);
    running.add(run);
    void run.finally(() => running.delete(run));
  }

  /**
   * A running turn whose lease is this worker's while it does not hold the tab is a turn it lost
   * (its run could not release, or the worker restarted under the same id): renewed, it is taken
   * up as a takeover from itself, so it still gets its turn-done. False when the lease is not ours.
   */
  async function reclaimLostTurn(tabId: string, turnId: string): Promise<boolean> {
    const lease = await store.getLease(tabId);
    if (lease?.owner !== workerId || lease.turnId !== turnId) return false;
    if (!(await store.renewLease(tabId, { owner: workerId, leaseMs }))) return false;
    const renewed = await store.getLease(tabId);
    return renewed?.owner === workerId && renewed.turnId === turnId;
  }

  async function runLeased(first: HeldTab, lease: AcquireLeaseResult, turnId: string) {
    const tabId = first.tabId;
    let takenOver = lease.takenOver;
    const activeTurnId = takenOver?.turnId ?? turnId;
    try {
      for (let held = first, attempt = 1; ; attempt++) {
        try {
          await holder.hold(held, activeTurnId, (session, cancel, interrupts) =>
            runHeld(session, cancel, interrupts, lease, activeTurnId, takenOver),
          );
          break;
        } catch (error) {
          if (!(error instanceof StaleWriterError) || attempt >= 3) throw error;
          logger.warn({ tabId }, 'a stale writer appended to a tab this worker holds; repairing');
          takenOver = { turnId: activeTurnId, owner: 'a stale writer' };
          // The lease is still this worker's; the hold that ended marked its handle lost.
          held = holder.heldTab(tabId);
        }
      }
    } catch (error) {
      logger.error({ err: error, tabId }, 'tab run failed');
    } finally {
      claimed.delete(tabId);
    }
    // A message that arrived as the turn ended found the tab still held: look again.
    if (deps.stopping()) return;
    try {
      const waiting = await store.inboxList(tabId);
      if (waiting.length > 0) await claim(tabId);
    } catch (error) {
      logger.warn({ err: error, tabId }, 'inbox check failed; the sweep will retry');
    }
  }

  /** What a held tab runs: the turn taken over, else the turn of the oldest waiting message. */
  async function runHeld(
    session: TabSession,
    cancel: CancelWatch,
    interrupts: InterruptWatch,
    lease: AcquireLeaseResult,
    turnId: string,
    takenOver: AcquireLeaseResult['takenOver'],
  ): Promise<TurnOutcome | null> {
    const tabId = session.tabId;
    const paused = lease.waiting;
    if (paused !== null) {
      // A paused turn (or one whose holder died pausing it) is woken, never taken over, and no
      // other turn starts while it waits.
      if (paused.turnId !== turnId) return null;
      return resumePaused(session, cancel, interrupts, lease, turnId, takenOver !== undefined);
    }
    if (takenOver && session.log.some((chunk) => chunk.turnId === takenOver.turnId)) {
      logger.info({ tabId, turnId, from: takenOver.owner }, 'taking over a turn');
      // The generation the dead holder recorded, so a cancel sent since still applies; when
      // none was recorded (a turn begun before cancel generations existed), the current one.
      const recorded = (await session.store.getLease(tabId))?.cancelGeneration ?? null;
      const generation = recorded ?? (await session.store.cancelGeneration(tabId));
      await holder.beginTurn(session, cancel, generation);
      return takeOver(session, cancel, interrupts, lease, turnId, takenOver.owner);
    }
    // The message that got the tab claimed may have overtaken one sent before it on the way
    // into the inbox: the opener is picked once that one is in too.
    await deps.messagesStored(tabId);
    const waiting = await session.store.inboxList(tabId);
    // Wake-ups for a paused turn that has resumed since: nothing left to wake.
    const stale = waiting.filter((message) => message.mode === 'approval');
    if (stale.length > 0) {
      await session.store.inboxRemove(
        tabId,
        stale.map((message) => message.chunkId),
      );
    }
    const opener = pickOpener(waiting.filter((message) => message.mode !== 'approval'));
    if (!opener) return null;
    // Recorded before the opener's chunk is written, so a takeover always finds it.
    await holder.beginTurn(session, cancel, opener.cancelGeneration);
    return runTurn({
      deps: deps.turnDependencies,
      session,
      config: lease.tab.config,
      turnId,
      start:
        opener.mode === 'compact'
          ? { kind: 'compact', message: opener }
          : { kind: 'message', message: opener },
      cancel,
      interrupts,
    });
  }

  /**
   * Wakes a paused turn (see planResume): it resumes once every waiting call is decided, or a
   * cancel, an interrupting message or the expiry decides the rest; else it keeps waiting and the
   * tab is let go. Denials the system makes are recorded like a person's, all or none, so a
   * person's decision made meanwhile wins and a later one is refused.
   */
  async function resumePaused(
    session: TabSession,
    cancel: CancelWatch,
    interrupts: InterruptWatch,
    lease: AcquireLeaseResult,
    turnId: string,
    /**
     * The tab was taken from a holder that died pausing or resuming the turn: its run began
     * (turn-start) and never ended, so this one continues it, and ends it if the turn still waits.
     */
    takenOver: boolean,
  ): Promise<TurnOutcome | null> {
    const tabId = session.tabId;
    const waiting = lease.waiting;
    if (waiting === null || waiting.turnId !== turnId) return null;
    const callIds = waiting.calls.map((call) => call.callId);
    for (let attempt = 1; ; attempt++) {
      const [inbox, cancelGeneration, read] = await Promise.all([
        session.store.inboxList(tabId),
        session.store.cancelGeneration(tabId),
        session.store.decisionsFor(tabId, callIds),
      ]);
      cancel.hear(cancelGeneration);
      const planWith = (decisions: typeof read) =>
        planResume({ waiting, decisions, inbox, cancelGeneration, now: Date.now(), newId: ids });
      let decisions = read;
      let plan = planWith(decisions);
      if (plan.kind === 'wait' && plan.wakeIds.length > 0) {
        // Read side by side, the decisions may predate a wake-up the inbox showed: read them
        // again, after it, before the wake-ups are let go.
        decisions = await session.store.decisionsFor(tabId, callIds);
        plan = planWith(decisions);
      }
      if (plan.kind === 'wait') {
        if (plan.wakeIds.length > 0) await session.store.inboxRemove(tabId, plan.wakeIds);
        logger.debug({ tabId, turnId }, 'paused turn still waits for decisions');
        return takenOver ? { reason: 'awaiting_approval', usage: emptyUsage() } : null;
      }
      if (plan.systemDenials.length > 0) {
        const { conflicts } = await session.store.recordDecisions(
          tabId,
          plan.systemDenials.map(({ callId, chunkId, decision, reason, decidedBy }) => ({
            callId,
            turnId,
            chunkId,
            decision,
            decidedBy,
            ...(reason === undefined ? {} : { reason }),
          })),
        );
        // A person decided meanwhile: plan again with that decision.
        if (conflicts.length > 0 && attempt < 3) continue;
      }
      // The decisions as recorded: a person's or the system's.
      const recorded =
        plan.systemDenials.length > 0
          ? await session.store.decisionsFor(tabId, callIds)
          : decisions;
      logger.info({ tabId, turnId }, 'resuming a turn paused for approval');
      return runTurn({
        deps: deps.turnDependencies,
        session,
        config: lease.tab.config,
        turnId,
        start: {
          kind: 'approved',
          waiting,
          decisions: recorded,
          wakeIds: plan.wakeIds,
          announce: !takenOver,
          // Recorded beside the resume's first writes; the paused turn's stamp is in `waiting`
          // until they are done, so a takeover finds it either way.
          begin: () => holder.beginTurn(session, cancel, waiting.cancelGeneration),
        },
        cancel,
        interrupts,
      });
    }
  }

  /** After another worker died mid-turn: answer its open calls, say so, and go on if possible. */
  async function takeOver(
    session: TabSession,
    cancel: CancelWatch,
    interrupts: InterruptWatch,
    lease: AcquireLeaseResult,
    turnId: string,
    previousOwner: string,
  ): Promise<TurnOutcome | null> {
    const plan = planTakeover({ log: session.log, turnId, previousOwner, workerId, newId: ids });
    await session.append(plan.append);
    if (plan.resumeStep === null) return { reason: 'error', usage: emptyUsage() };
    return runTurn({
      deps: deps.turnDependencies,
      session,
      config: lease.tab.config,
      turnId,
      start: { kind: 'resume', step: plan.resumeStep },
      cancel,
      interrupts,
    });
  }

  async function refuse(tabId: string, chunkId: string, why: string): Promise<boolean> {
    if (deps.stopping() || claimed.has(tabId) || holder.holds(tabId)) return false;
    claimed.add(tabId);
    let launched = false;
    try {
      if ((await store.getTab(tabId)).status !== 'idle') return false;
      const turnId = ids();
      const { lease, held } = await holder.acquire(tabId, turnId);
      if (!held) return false;
      if (lease.takenOver) {
        // The tab turned out to be owed a takeover: that comes first.
        metrics.takeovers.inc();
        launch(held, lease, turnId);
        launched = true;
        return false;
      }
      const outcome = await holder.hold(held, turnId, async (session) => {
        await session.publish({ event: 'turn-start', data: { tabId, turnId } });
        await session.append([
          errorChunk(
            { id: chunkId, turnId, step: 0 },
            'system',
            `The message could not be stored: ${why}`,
          ),
        ]);
        return { reason: 'error', usage: emptyUsage() };
      });
      return outcome !== null;
    } finally {
      if (!launched) claimed.delete(tabId);
    }
  }

  return {
    claim,
    refuse,
    async settled() {
      await Promise.allSettled([...running]);
    },
  };
}
