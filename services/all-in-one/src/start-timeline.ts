/**
 * Milliseconds since the process started (Node's performance clock starts with the process) at
 * each start-up step, for the one debug line that says where a start spent its time.
 */
export class StartTimeline {
  readonly #marks: Record<string, number> = {};

  /** Records that `step` finished now. */
  mark(step: string): void {
    this.#marks[step] = Math.round(performance.now());
  }

  /** The steps in the order they finished, each with its time since the process started. */
  marks(): Record<string, number> {
    return { ...this.#marks };
  }
}
