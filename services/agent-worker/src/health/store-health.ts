import { isDatabaseUnreachable } from '@chunklog/chunk-core';

/** Whether the worker's store answered lately, for its health and readiness endpoints. */
export class StoreHealth {
  private unreachableSince: number | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  /** Records the outcome of a store call: only reachability counts, not the call's answer. */
  report(error?: unknown): void {
    if (error !== undefined && isDatabaseUnreachable(error)) this.unreachableSince ??= this.now();
    else this.unreachableSince = null;
  }

  get reachable(): boolean {
    return this.unreachableSince === null;
  }

  /** `{ store: 'reachable' }`, or `'unreachable'` with the time it has been so. */
  snapshot(): { store: 'reachable' | 'unreachable'; unreachableForMs?: number } {
    if (this.unreachableSince === null) return { store: 'reachable' };
    return { store: 'unreachable', unreachableForMs: this.now() - this.unreachableSince };
  }
}
