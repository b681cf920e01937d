/** A push-to-pull queue: producers push, one async iterator pulls; ends or fails once. */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private waiting: {
    resolve: (result: IteratorResult<T>) => void;
    reject: (error: unknown) => void;
  } | null = null;
  private ended: { error: unknown } | null = null;

  constructor(private readonly onReturn: () => void = () => {}) {}

  push(item: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const waiting = this.waiting;
      this.waiting = null;
      waiting.resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** Ends the queue: items already pushed are still read, then `done` (or `error` is thrown). */
  end(error: unknown = null): void {
    if (this.ended) return;
    this.ended = { error };
    if (this.waiting && this.items.length === 0) {
      const waiting = this.waiting;
      this.waiting = null;
      if (error === null) waiting.resolve({ value: undefined, done: true });
      else waiting.reject(error);
    }
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.ended) {
      return this.ended.error === null
        ? Promise.resolve({ value: undefined, done: true })
        : Promise.reject(this.ended.error);
    }
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.items.length = 0;
    this.end();
    this.onReturn();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
