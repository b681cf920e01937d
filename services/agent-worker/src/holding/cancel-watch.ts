/**
 * Decides when a held tab's turn is cancelled: once a cancel generation above the turn's own is
 * heard of, from NATS (fast), the store (read before every model call) or a waiting message's
 * stamp. Cancels heard before the turn's generation is known are kept until it is.
 */
export class CancelWatch {
  private readonly controller = new AbortController();
  /** The highest cancel generation heard of so far. */
  private heard = 0;
  /** A cancel without a generation (an older gateway): it stops whatever turn runs. */
  private heardUnnumbered = false;
  private turnGeneration: number | null = null;

  /** Aborted when the turn is cancelled, or by `abort()` (lease lost, parent turn cancelled). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** A cancel of the tab (`undefined`: one that carried no generation). */
  hear(generation: number | undefined): void {
    if (generation === undefined) this.heardUnnumbered = true;
    else this.heard = Math.max(this.heard, generation);
    this.check();
  }

  /** The stamp of the turn's opening message: cancels above it apply to the turn. */
  begin(turnGeneration: number): void {
    this.turnGeneration = turnGeneration;
    this.check();
  }

  /** The stamp the turn runs under, once known. */
  get generation(): number | null {
    return this.turnGeneration;
  }

  /**
   * The cancel generation that stops this turn, or null while none does. Messages stamped below
   * it were accepted before that cancel and belong to the cancelled turn; the others wait for a
   * turn of their own.
   */
  cancelledAt(): number | null {
    if (this.turnGeneration === null) return null;
    if (this.heardUnnumbered) return Math.max(this.heard, this.turnGeneration + 1);
    return this.heard > this.turnGeneration ? this.heard : null;
  }

  /**
   * Whether a message stamped `generation` was accepted after a cancel of this turn (a stamp above
   * the turn's own); false while the turn's stamp is not known yet.
   */
  acceptedAfterCancel(generation: number): boolean {
    return this.turnGeneration !== null && generation > this.turnGeneration;
  }

  /** Aborts the turn for a reason other than a cancel. */
  abort(): void {
    this.controller.abort();
  }

  private check(): void {
    if (this.cancelledAt() !== null) this.controller.abort();
  }
}
