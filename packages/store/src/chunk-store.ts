import type { Chunk, ChunkPage, NewChunk, Tab, TabConfig, Usage } from '@chunklog/chunk-core';

/** How a new user message relates to a turn that may be running (DESIGN section 8). */
export type MessageMode = 'interrupt' | 'enqueue' | 'reject';

/** A user message accepted by the gateway and waiting for a worker to turn it into a chunk. */
export interface InboxMessage {
  tabId: string;
  /** Id of the user chunk the message becomes. */
  chunkId: string;
  text: string;
  mode: MessageMode;
  /**
   * The tab's cancel generation when the gateway accepted the message: a cancel recorded after
   * it (a higher generation) stops its turn; one recorded before never does.
   */
  cancelGeneration: number;
  /**
   * Epoch ms at which it entered the inbox. Inbox order is the intake sequence given to
   * inboxPut (messages stored without one first), then createdAt, then chunkId.
   */
  createdAt: number;
}

/** The turn lease a worker holds on a tab while it runs a turn there. */
export interface TurnLease {
  tabId: string;
  turnId: string;
  owner: string;
  /** Epoch ms (database clock). */
  expiresAt: number;
  /** The cancel generation the turn runs under, once its holder recorded it; else null. */
  cancelGeneration: number | null;
}

export interface AcquireLeaseResult {
  acquired: boolean;
  /** When the lease was taken from an expired holder: the turn that holder was running. */
  takenOver?: { turnId: string; owner: string };
  tab: Tab;
}

export interface PageOptions {
  /** Chunks with seq < before, the newest of them (default: from the tail). */
  before?: number;
  /** Chunks with seq > after, the oldest of them. Exclusive with before. */
  after?: number;
  /** 1..500. */
  limit: number;
}

export interface AppendOptions {
  /** The seq the first chunk must get; otherwise the append fails with ConflictError. */
  expectedSeq?: number;
}

/** The storage port: every durable operation of chunklog (DESIGN sections 3, 4, 6, 8). */
export interface ChunkStore {
  /** Applies pending migrations. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  createTab(input: {
    tenantId: string;
    title?: string;
    config?: TabConfig;
    parentTabId?: string;
  }): Promise<Tab>;
  /** Throws NotFoundError when absent or (with tenantId) another tenant's. */
  getTab(tabId: string, options?: { tenantId?: string }): Promise<Tab>;
  listTabs(
    tenantId: string,
    options: { limit: number; cursor?: string },
  ): Promise<{ tabs: Tab[]; nextCursor: string | null }>;
  deleteTab(tabId: string, options?: { tenantId?: string }): Promise<void>;
  /** Deletes every chunk; seq is never reused afterwards. */
  clearTab(tabId: string): Promise<void>;
  /** Tenant of a tab, or null when the tab does not exist. */
  tabTenant(tabId: string): Promise<string | null>;

  /** Appends chunks with contiguous seqs in one transaction; idempotent by chunk id. */
  append(tabId: string, chunks: NewChunk[], options?: AppendOptions): Promise<Chunk[]>;
  page(tabId: string, options: PageOptions): Promise<ChunkPage>;
  /** Every chunk of a tab in seq order (the worker's history read). */
  readAll(tabId: string): Promise<Chunk[]>;

  /** Takes the tab's turn lease when the tab is idle or its lease expired. */
  acquireLease(
    tabId: string,
    input: { owner: string; turnId: string; leaseMs: number },
  ): Promise<AcquireLeaseResult>;
  /** Extends a held lease; false when it is no longer this owner's. */
  renewLease(tabId: string, input: { owner: string; leaseMs: number }): Promise<boolean>;
  /** Ends the turn: status idle, usage added to the tab's total. False when not held. */
  releaseLease(tabId: string, input: { owner: string; usage: Usage }): Promise<boolean>;
  /** Tabs whose lease expired, or that are idle with inbox messages waiting. */
  tabsNeedingWork(limit: number): Promise<string[]>;
  /** The lease currently on a tab, if any (expired or not). */
  getLease(tabId: string): Promise<TurnLease | null>;
  /**
   * Records the cancel generation the holder's turn runs under (kept through a takeover, cleared
   * on release); false when the lease is not this owner's.
   */
  setTurnCancelGeneration(
    tabId: string,
    input: { owner: string; cancelGeneration: number },
  ): Promise<boolean>;

  /**
   * Records a cancel of everything accepted on the tab so far: raises the tab's cancel
   * generation and returns it. Throws NotFoundError when absent or (with tenantId) another
   * tenant's.
   */
  requestCancel(tabId: string, options?: { tenantId?: string }): Promise<number>;
  /** The tab's cancel generation (how many cancels it has had); NotFoundError as getTab. */
  cancelGeneration(tabId: string, options?: { tenantId?: string }): Promise<number>;

  /**
   * Stores a message; false (and no change) when its chunkId is already in the inbox or the log.
   * Without a cancelGeneration it gets the tab's current one. intakeSeq is the message's place
   * in acceptance order (the intake queue's item sequence), whatever order messages are put in.
   */
  inboxPut(
    message: Omit<InboxMessage, 'createdAt' | 'cancelGeneration'> & {
      cancelGeneration?: number;
      intakeSeq?: number;
    },
  ): Promise<boolean>;
  /** Waiting messages of a tab in acceptance order: by intakeSeq (none first), then as stored. */
  inboxList(tabId: string): Promise<InboxMessage[]>;
  /** Removes messages once their chunks are appended. */
  inboxRemove(tabId: string, chunkIds: string[]): Promise<void>;

  createTenant(input: { name: string; id?: string }): Promise<{ id: string; name: string }>;
  /** Stores the hash of an API key for a tenant (the key itself is never stored). */
  addApiKey(tenantId: string, key: string): Promise<void>;
  /** The tenant of an API key, or null. */
  authenticate(key: string): Promise<string | null>;
}
