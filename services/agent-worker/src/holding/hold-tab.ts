import type { Bus, Subscription } from '@chunklog/bus';
import {
  CancelCommandSchema,
  cancelSubject,
  emptyUsage,
  type FoldOptions,
  type InterruptNotice,
  InterruptNoticeSchema,
  interruptSubject,
  snapshotSubject,
} from '@chunklog/chunk-core';
import type { AcquireLeaseResult, LeaseStore } from '@chunklog/store';
import type { Logger } from 'pino';
import type { StoreHealth } from '../health/store-health';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import type { TurnOutcome } from '../turn/turn';
import { CancelWatch } from './cancel-watch';
import { HeldTab, type HeldTabStore, LeaseLostError } from './held-tab';
import { InterruptWatch } from './interrupt-watch';
import { TabSession } from './tab-session';

/** Raised when a fenced append fails although this worker still holds the lease. */
export class StaleWriterError extends Error {
  constructor(tabId: string) {
    super(`Another writer appended to tab ${tabId} while this worker held it`);
    this.name = 'StaleWriterError';
  }
}

/** What runs while a tab is held; null when there was no turn to run. */
export type HeldTurn = (
  session: TabSession,
  cancel: CancelWatch,
  interrupts: InterruptWatch,
) => Promise<TurnOutcome | null>;

/** What the holder does with the store: take leases, and the work on the tabs it holds. */
export type HolderStore = HeldTabStore & Pick<LeaseStore, 'acquireLease'>;

export interface TabHolder {
  /**
   * Takes the tab's turn lease for `turnId` (when the tab is idle or its lease expired) and,
   * when this worker got it, the tab's handle (see HeldTab) for `hold`; null when it did not.
   */
  acquire(
    tabId: string,
    turnId: string,
  ): Promise<{ lease: AcquireLeaseResult; held: HeldTab | null }>;
  /**
   * The handle of a tab whose lease this worker holds already without holding the tab (a lost
   * turn taken up again, or a hold begun again after a stale writer's append).
   */
  heldTab(tabId: string): HeldTab;
  /**
   * Runs `body` while holding the tab: renews the lease (from before the log loads, so a long log
   * never lets it lapse), answers snapshots, obeys cancel, hears interrupts; then releases the
   * lease and publishes turn-done. Store calls go through `held`, which waits out an outage while
   * the lease may still be ours. Null when another worker took the tab; StaleWriterError when a
   * stale writer appended while the lease is still ours (the caller re-reads and repairs).
   */
  hold(
    held: HeldTab,
    turnId: string,
    body: HeldTurn,
    parentSignal?: AbortSignal,
  ): Promise<TurnOutcome | null>;
  /**
   * Fixes the cancel generation the turn runs under, in the store first (a worker taking the
   * turn over reads it there) and then for this worker's cancel checks.
   */
  beginTurn(session: TabSession, cancel: CancelWatch, cancelGeneration: number): Promise<void>;
  /**
   * Tells the holder of the tab that an `interrupt` message is in its inbox: directly when it is
   * held here, else on the bus (`interruptSubject`) for the worker that holds it. Never throws.
   */
  announceInterrupt(notice: InterruptNotice): Promise<void>;
  /** The tabs held right now, by id. */
  readonly sessions: ReadonlyMap<string, TabSession>;
  /** True from the start of `hold(tabId)` to its end, the log load included. */
  holds(tabId: string): boolean;
}

export function createTabHolder(deps: {
  store: HolderStore;
  bus: Bus;
  logger: Logger;
  metrics: WorkerMetrics;
  health: StoreHealth;
  workerId: string;
  leaseMs: number;
  /** How held tabs fold their log into request messages (the worker's chunk budget). */
  foldOptions?: FoldOptions;
  /** True once the worker is stopping: a lost lease is then not looked up again. */
  stopping: () => boolean;
  /** Called once a turn's end (and its webhook deliveries) is committed. */
  turnEnded?: () => void;
}): TabHolder {
  const { bus, logger, metrics, health, workerId, leaseMs } = deps;
  const sessions = new Map<string, TabSession>();
  const holding = new Set<string>();
  /** How each tab held here hears of an interrupting message. */
  const listening = new Map<string, (notice: InterruptNotice) => void>();

  function heldTab(tabId: string): HeldTab {
    return new HeldTab(tabId, workerId, leaseMs, deps.store, {
      health,
      logger,
      stopping: deps.stopping,
    });
  }

  async function acquire(tabId: string, turnId: string) {
    const lease = await deps.store.acquireLease(tabId, { owner: workerId, turnId, leaseMs });
    return { lease, held: lease.acquired ? heldTab(tabId) : null };
  }

  async function hold(
    held: HeldTab,
    turnId: string,
    body: HeldTurn,
    parentSignal?: AbortSignal,
  ): Promise<TurnOutcome | null> {
    const { tabId, store } = held;
    const cancel = new CancelWatch();
    const interrupts = new InterruptWatch();
    const abortTurn = () => cancel.abort();
    let session: TabSession | null = null;
    const hearInterrupt = ({ chunkId, cancelGeneration }: InterruptNotice) => {
      if (cancel.signal.aborted) return;
      // Accepted after a cancel of this turn: the message waits for a turn of its own, and the
      // cancel reaches the turn by its own paths (NATS, the store, the drain).
      if (cancelGeneration !== undefined && cancel.acceptedAfterCancel(cancelGeneration)) return;
      // The turn took the message in already (its opener, or a drain before the notice).
      if (session?.log.some((chunk) => chunk.id === chunkId)) return;
      interrupts.hear();
    };
    holding.add(tabId);
    let renewalFailing = false;
    const renewer = setInterval(
      () => {
        held.renew().then(
          (renewed) => {
            health.report();
            renewalFailing = false;
            if (!renewed) held.markLost();
          },
          (error) => {
            health.report(error);
            if (!renewalFailing)
              logger.warn({ err: error, tabId }, 'lease renewal failed; retrying');
            renewalFailing = true;
          },
        );
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    const subscriptions: Subscription[] = [];
    try {
      // An interrupt stored by this worker's own intake is heard directly, from the start.
      listening.set(tabId, hearInterrupt);
      // Listening before the log is read: the tab shows as running from the lease on, and a
      // cancel sent then must not fall in the gap while a long log loads. One published before
      // this subscription is found in the store before the first model call.
      subscriptions.push(
        await bus.subscribe(cancelSubject(tabId), (payload) => {
          const command = CancelCommandSchema.safeParse(payload);
          cancel.hear(command.success ? command.data.generation : undefined);
        }),
      );
      subscriptions.push(
        await bus.subscribe(interruptSubject(tabId), (payload) => {
          const notice = InterruptNoticeSchema.safeParse(payload);
          if (notice.success) hearInterrupt(notice.data);
        }),
      );
      // From the latest compaction on: what a request is built from, whatever the tab's depth.
      const log = await store.readFromLatestCompaction(tabId);
      if (held.lost) throw new LeaseLostError(tabId);
      const current = new TabSession(held, log, bus, logger, metrics, deps.foldOptions);
      session = current;
      sessions.set(tabId, current);
      metrics.runningTurns.inc();
      current.lifetime.signal.addEventListener('abort', abortTurn, { once: true });
      parentSignal?.addEventListener('abort', abortTurn, { once: true });
      if (parentSignal?.aborted) abortTurn();
      subscriptions.push(await bus.serve(snapshotSubject(tabId), async () => current.snapshot()));
      const outcome = await body(current, cancel, interrupts);
      clearInterval(renewer);
      logger.debug({ tabId, turnId, reason: outcome?.reason }, 'turn over; releasing');
      const usage = outcome?.usage ?? emptyUsage();
      // A turn that ran ends here, its webhook events queued with the release (one statement).
      const released = await store.releaseLease(tabId, {
        owner: workerId,
        usage,
        ...(outcome ? { ended: { turnId, reason: outcome.reason } } : {}),
      });
      if (!released) throw new LeaseLostError(tabId);
      if (outcome) {
        deps.turnEnded?.();
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
      if (error instanceof LeaseLostError || held.lost) {
        // A conflict while the lease is still ours means a stale writer (a worker that was
        // paused past its lease) appended first: the caller re-reads the log and repairs.
        if (!deps.stopping() && (await held.stillOurs())) throw new StaleWriterError(tabId);
        logger.warn({ tabId, turnId }, 'turn abandoned: another worker holds the tab');
        return null;
      }
      throw error;
    } finally {
      clearInterval(renewer);
      holding.delete(tabId);
      if (listening.get(tabId) === hearInterrupt) listening.delete(tabId);
      parentSignal?.removeEventListener('abort', abortTurn);
      if (session) {
        sessions.delete(tabId);
        metrics.runningTurns.dec();
      }
      await Promise.allSettled(subscriptions.map((subscription) => subscription.stop()));
    }
  }

  async function beginTurn(session: TabSession, cancel: CancelWatch, cancelGeneration: number) {
    const tabId = session.tabId;
    const recorded = await session.store.setTurnCancelGeneration(tabId, {
      owner: workerId,
      cancelGeneration,
    });
    if (!recorded) throw new LeaseLostError(tabId);
    cancel.begin(cancelGeneration);
  }

  async function announceInterrupt(notice: InterruptNotice): Promise<void> {
    const local = listening.get(notice.tabId);
    if (local) {
      local(notice);
      return;
    }
    try {
      await bus.publish(interruptSubject(notice.tabId), notice);
    } catch (error) {
      // The holder still takes the message in at its next step boundary.
      logger.warn({ err: error, tabId: notice.tabId }, 'interrupt not announced');
    }
  }

  return {
    acquire,
    heldTab,
    hold,
    beginTurn,
    announceInterrupt,
    sessions,
    holds: (tabId) => holding.has(tabId),
  };
}
