/**
 * Plays the worker's part of the contract for gateway tests: appends chunks to the store,
 * publishes the live events (docs/architecture.md, "Live events") in the same order a worker
 * does (a seal only after its commit), and answers open-block snapshot requests.
 */
import { randomUUID } from 'node:crypto';
import type { Bus, Subscription } from '@chunklog/bus';
import {
  type Chunk,
  emptyUsage,
  type LiveEvent,
  liveEventSubject,
  type OpenBlockSnapshot,
  snapshotSubject,
  type Usage,
} from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';

interface OpenBlock {
  id: string;
  turnId: string;
  step: number;
  text: string;
}

export class TurnDriver {
  private turnId: string | null = null;
  private open: OpenBlock | null = null;
  private lastSeq = 0;
  private snapshotService: Subscription | null = null;
  private readonly owner = `driver-${randomUUID()}`;

  constructor(
    private readonly store: ChunkStore,
    private readonly bus: Bus,
    readonly tabId: string,
  ) {}

  /** Chunks sealed so far, in seq order (what the REST pages must return). */
  readonly sealed: Chunk[] = [];

  async startTurn(): Promise<string> {
    this.snapshotService ??= await this.bus.serve(snapshotSubject(this.tabId), async () =>
      this.snapshot(),
    );
    const turnId = randomUUID();
    const lease = await this.store.acquireLease(this.tabId, {
      owner: this.owner,
      turnId,
      leaseMs: 60_000,
    });
    if (!lease.acquired) throw new Error('driver could not take the lease');
    this.turnId = turnId;
    await this.publish({ event: 'turn-start', data: { tabId: this.tabId, turnId } });
    return turnId;
  }

  async sealUserText(text: string): Promise<Chunk> {
    return this.sealNew({ role: 'user', type: 'text', data: { text } });
  }

  async openBlock(): Promise<string> {
    const turnId = this.requireTurn();
    const id = randomUUID();
    this.open = { id, turnId, step: 0, text: '' };
    await this.publish({
      event: 'chunk-open',
      data: { tabId: this.tabId, id, turnId, step: 0, role: 'assistant', type: 'text' },
    });
    return id;
  }

  async delta(text: string): Promise<void> {
    const open = this.open;
    if (!open) throw new Error('no open block');
    const offset = open.text.length;
    open.text += text;
    await this.publish({
      event: 'chunk-delta',
      data: { tabId: this.tabId, id: open.id, offset, text },
    });
  }

  /** Seals the open block: commit first, then the event. */
  async sealOpen(options: { publish?: boolean } = {}): Promise<Chunk> {
    const open = this.open;
    if (!open) throw new Error('no open block');
    const [chunk] = await this.store.append(this.tabId, [
      {
        id: open.id,
        tabId: this.tabId,
        turnId: open.turnId,
        step: open.step,
        role: 'assistant',
        type: 'text',
        data: { text: open.text },
      },
    ]);
    this.open = null;
    return this.afterCommit(chunk!, options.publish ?? true);
  }

  /** Appends a sealed chunk; with publish false it is stored but its event is "lost". */
  async sealNew(
    body: { role: 'user' | 'assistant'; type: 'text'; data: { text: string } },
    options: { publish?: boolean } = {},
  ): Promise<Chunk> {
    const turnId = this.requireTurn();
    const [chunk] = await this.store.append(this.tabId, [
      { id: randomUUID(), tabId: this.tabId, turnId, step: 0, ...body },
    ]);
    return this.afterCommit(chunk!, options.publish ?? true);
  }

  /** Publishes the seal of an already stored chunk (replays a late or duplicate event). */
  async publishSeal(chunk: Chunk): Promise<void> {
    await this.publish({ event: 'chunk-seal', data: { tabId: this.tabId, chunk } });
  }

  async endTurn(usage: Usage = emptyUsage()): Promise<void> {
    const turnId = this.requireTurn();
    await this.store.releaseLease(this.tabId, { owner: this.owner, usage });
    this.turnId = null;
    await this.publish({
      event: 'turn-done',
      data: { tabId: this.tabId, turnId, reason: 'completed', usage },
    });
  }

  async close(): Promise<void> {
    await this.snapshotService?.stop();
    this.snapshotService = null;
  }

  snapshot(): OpenBlockSnapshot {
    const open = this.open;
    if (!open) return { open: null };
    return {
      open: { ...open, role: 'assistant', type: 'text', lastSeq: this.lastSeq },
    };
  }

  private async afterCommit(chunk: Chunk, publish: boolean): Promise<Chunk> {
    this.lastSeq = chunk.seq;
    this.sealed.push(chunk);
    if (publish) await this.publishSeal(chunk);
    return chunk;
  }

  private requireTurn(): string {
    if (!this.turnId) throw new Error('no turn running');
    return this.turnId;
  }

  private publish(event: LiveEvent): Promise<void> {
    return this.bus.publish(liveEventSubject(this.tabId, event.event), event.data);
  }
}
