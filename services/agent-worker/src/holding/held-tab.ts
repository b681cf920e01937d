import type {
  ApprovalStore,
  CancelStore,
  ChunkLog,
  InboxStore,
  LeaseStore,
  TabStore,
} from '@chunklog/store';
import type { Logger } from 'pino';
import type { StoreHealth } from '../health/store-health';
import { patientStore } from '../health/wait-out-outage';

/** Thrown once the worker learns that another worker holds the tab now: it must stop writing. */
export class LeaseLostError extends Error {
  constructor(tabId: string, options?: { cause?: unknown }) {
    super(`Lost the turn lease of tab ${tabId}`, options);
    this.name = 'LeaseLostError';
  }
}

/**
 * What the work on a held tab does with the store: its log, its lease, its inbox, its cancel
 * generation, its tenant's name (for the tab's MCP servers) and its paused turn's decisions.
 */
export type HeldTabStore = ChunkLog &
  Pick<LeaseStore, 'renewLease' | 'releaseLease' | 'getLease' | 'setTurnCancelGeneration'> &
  Pick<InboxStore, 'inboxList' | 'inboxRemove'> &
  Pick<CancelStore, 'cancelGeneration'> &
  Pick<TabStore, 'tabTenantName'> &
  Pick<ApprovalStore, 'getWaiting' | 'setWaiting' | 'recordDecisions' | 'decisionsFor'>;

/** Where a held tab's outage waits are reported and logged, and when they give up. */
export interface HeldTabPatience {
  health: StoreHealth;
  logger: Logger;
  /** True once the worker is stopping: a wait for the store then ends. */
  stopping: () => boolean;
}

/**
 * A tab whose turn lease this worker took: the one handle through which everything that works
 * on the tab (the holder, the session's appends, the turn, the claim's choice of what to run)
 * reaches the store. Made where the lease is taken, for one hold of the tab. Every call of
 * `store` waits out a store outage for as long as the lease may still be this worker's: it gives
 * up with LeaseLostError once the lease is known lost or the worker stops.
 */
export class HeldTab {
  readonly store: HeldTabStore;
  /** Set once the lease is known to be another worker's (or given up): nothing more is written. */
  lost = false;
  /** Aborted when the lease is lost; the turn's signals derive from it. */
  readonly lifetime = new AbortController();

  constructor(
    readonly tabId: string,
    readonly owner: string,
    private readonly leaseMs: number,
    /** The store as it is: for the two calls a holder makes once, never waiting. */
    private readonly direct: HeldTabStore,
    private readonly patience: HeldTabPatience,
  ) {
    this.store = patientStore(direct, {
      health: patience.health,
      logger: patience.logger.child({ tabId }),
      giveUp: () => (patience.stopping() || this.lost ? new LeaseLostError(tabId) : null),
    });
  }

  /**
   * Extends the lease once; false when it is no longer this worker's. Not waited out: a renewal
   * missed in an outage is made up by the next one, and the store lets an owner renew a lapsed
   * lease nobody took.
   */
  renew(): Promise<boolean> {
    return this.direct.renewLease(this.tabId, { owner: this.owner, leaseMs: this.leaseMs });
  }

  /** Whether the lease is still this worker's, asked once: false when the store does not answer. */
  async stillOurs(): Promise<boolean> {
    const lease = await this.direct.getLease(this.tabId).catch(() => null);
    return lease?.owner === this.owner;
  }

  /** Marks the lease lost: the turn's signals abort and the store's waits give up. */
  markLost(cause?: unknown): void {
    if (this.lost) return;
    this.lost = true;
    this.patience.logger.warn(
      { tabId: this.tabId, ...(cause instanceof Error ? { err: cause } : { reason: cause }) },
      'lost the tab lease; stopping',
    );
    this.lifetime.abort(new LeaseLostError(this.tabId, { cause }));
  }
}
