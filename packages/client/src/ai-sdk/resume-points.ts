import type { AnswerStart } from './answer-parts';

/** The part of the Web Storage API resume points need (`sessionStorage` fits). */
export interface ResumePointStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * Where each chat's running answer starts (the seq after which its stream begins and the user
 * chunk it answers), kept where a page reload finds it: a resume replays the answer from there.
 */
export class ResumePoints {
  private readonly storage: ResumePointStorage;

  constructor(storage?: ResumePointStorage) {
    this.storage = storage ?? sessionStorageOrNull() ?? memoryStorage();
  }

  get(tabId: string): AnswerStart | null {
    let value: unknown;
    try {
      value = JSON.parse(this.storage.getItem(key(tabId)) ?? 'null');
    } catch {
      return null;
    }
    // Written by an earlier page, perhaps of another version: read only what has the shape.
    if (typeof value !== 'object' || value === null) return null;
    const { after, userChunkId } = value as Record<string, unknown>;
    if (typeof after !== 'number' || typeof userChunkId !== 'string') return null;
    return { after, userChunkId, turnId: null };
  }

  set(tabId: string, start: { after: number; userChunkId: string }): void {
    const value = JSON.stringify({ after: start.after, userChunkId: start.userChunkId });
    this.storage.setItem(key(tabId), value);
  }

  /** Forgets the answer to `userChunkId`, not a later one stored since. */
  forget(tabId: string, userChunkId: string | null): void {
    if (userChunkId !== null && this.get(tabId)?.userChunkId === userChunkId) {
      this.storage.removeItem(key(tabId));
    }
  }
}

function key(tabId: string): string {
  return `chunklog:ai-sdk:${tabId}`;
}

function sessionStorageOrNull(): ResumePointStorage | null {
  try {
    // Reading it throws where storage is blocked (sandboxed frames, some privacy settings).
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
  }
}

/** Storage in this page's memory only: what a reload cannot find (Node, blocked storage). */
export function memoryStorage(): ResumePointStorage {
  const items = new Map<string, string>();
  return {
    getItem: (name) => items.get(name) ?? null,
    setItem: (name, value) => void items.set(name, value),
    removeItem: (name) => void items.delete(name),
  };
}
