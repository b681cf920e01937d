/** A live subscription; stop() ends delivery. */
export interface Subscription {
  stop(): Promise<void>;
}

/** A durable work item from the intake queue. */
export interface WorkItem<T = unknown> {
  data: T;
  /** How many times it was delivered, 1 on the first delivery. */
  deliveryCount: number;
  /**
   * The queue's sequence number of the item: higher for an item whose enqueue() resolved after
   * this one's, the same on every redelivery (on NATS the stream sequence). Consumers handling
   * items concurrently order their effects by it.
   */
  sequence: number;
  /** Done: never delivered again. */
  ack(): Promise<void>;
  /** Give it back for redelivery (after delayMs). */
  nak(delayMs?: number): Promise<void>;
  /** Still working on it: push the redelivery deadline out. */
  working(): Promise<void>;
}

/**
 * The messaging port (docs/architecture.md, "Live events" and "Turns, leases and takeover").
 * Subjects use NATS semantics: tokens split
 * by '.', '*' matches one token, '>' the rest. Payloads are JSON values.
 */
export interface Bus {
  /** Fire-and-forget publish (live events, notices). */
  publish(subject: string, payload: unknown): Promise<void>;
  /**
   * Every message on subjects matching the pattern, in publish order per publisher. Resolves
   * once the subscription is live: anything published after that, by anyone, is delivered.
   * Handlers run asynchronously, never inside publish().
   */
  subscribe(
    pattern: string,
    handler: (payload: unknown, subject: string) => void,
  ): Promise<Subscription>;
  /** Request/reply; rejects with a timeout or no-responders error. */
  request(subject: string, payload: unknown, options?: { timeoutMs?: number }): Promise<unknown>;
  /**
   * Answers requests on a subject; with a queue name only one member of the group answers each.
   * A handler's error reaches the requester as the same named error (NotFoundError, ...).
   */
  serve(
    subject: string,
    handler: (payload: unknown, subject: string) => Promise<unknown>,
    options?: { queue?: string },
  ): Promise<Subscription>;
  /** Durably enqueues a work item; the same msgId within the dedupe window is stored once. */
  enqueue(queue: string, payload: unknown, options: { msgId: string }): Promise<void>;
  /**
   * Consumes a work queue: each item goes to one consumer, and is redelivered until acked.
   * An item neither acked nor nakked is redelivered once ackWaitMs (default 30 s; one value per
   * queue, set by the latest consume call) passes without working(); a handler that throws
   * naks its item with a backoff. At most `concurrency` (default 1) handlers run at once.
   */
  consume(
    queue: string,
    handler: (item: WorkItem) => Promise<void>,
    options?: { ackWaitMs?: number; concurrency?: number },
  ): Promise<Subscription>;
  /** True when the broker is reachable. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
