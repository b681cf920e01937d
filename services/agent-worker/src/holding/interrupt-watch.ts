/** The abort reason of a step cut by a new message, as opposed to a cancel or a lost lease. */
export class StepInterruptedError extends Error {
  constructor() {
    super('The step was interrupted by a new message');
    this.name = 'StepInterruptedError';
  }
}

/** Whether `signal` was aborted by an interrupting message (and not by a cancel or lease loss). */
export function wasInterrupted(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof StepInterruptedError;
}

/**
 * Decides when a held tab's running step is cut by a new `interrupt` message. A notice heard
 * while a step runs aborts `beginStep()`'s signal at once; one heard between steps stays pending
 * until an inbox read begun after it took its message in, so no notice is lost.
 */
export class InterruptWatch {
  private heard = 0;
  private handled = 0;
  private step: AbortController | null = null;

  /** An interrupt message was stored for the tab (its notice). */
  hear(): void {
    this.heard += 1;
    this.step?.abort(new StepInterruptedError());
  }

  /** True while a notice was heard after the latest inbox read began. */
  get pending(): boolean {
    return this.heard > this.handled;
  }

  /** Taken as an inbox read begins; pass it to `handledThrough` once the read's messages are in. */
  mark(): number {
    return this.heard;
  }

  /** The messages of every notice heard up to `mark` are taken in (or deliberately left). */
  handledThrough(mark: number): void {
    this.handled = Math.max(this.handled, mark);
  }

  /**
   * The signal a step runs under: aborted by `turnSignal` (cancel, lease loss) or by a notice
   * heard from now until `endStep()`, with a `StepInterruptedError` as its reason.
   */
  beginStep(turnSignal: AbortSignal): AbortSignal {
    const step = new AbortController();
    this.step = step;
    return AbortSignal.any([turnSignal, step.signal]);
  }

  endStep(): void {
    this.step = null;
  }
}
