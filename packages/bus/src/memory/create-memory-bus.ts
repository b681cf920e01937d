import { context } from '@opentelemetry/api';
import type { Bus, Subscription, WorkItem } from '../bus';
import { BusUnavailableError, NoRespondersError, RequestTimeoutError } from '../bus-errors';
import { type BusLogger, defaultBusLogger } from '../bus-logger';
import { deliverEvent } from '../deliver-event';
import { decodePayload, encodePayload, encodeReply } from '../json-payload';
import { assertValidQueueName, failedItemDelayMs } from '../queue-name';
import { fromRemoteError, type RemoteError, toRemoteError } from '../remote-error';
import { assertValidSubject, subjectMatches } from '../subject-matches';
import { activeTraceHeaders, type TraceHeaders, traceContextOf } from '../trace-headers';

export interface MemoryBusOptions {
  /** How long an enqueued msgId is remembered for dedupe (JetStream's duplicate window). */
  dedupeWindowMs?: number;
  /** Default reply timeout of request(). */
  requestTimeoutMs?: number;
  /** The process's pino logger (or a child); without one, JSON lines on stdout. */
  logger?: BusLogger;
}

type ReplyOutcome = { ok: true; body: string } | { ok: false; error: RemoteError };

interface Delivery {
  subject: string;
  body: string;
  /** The sender's trace context, carried as NATS carries it: in headers. */
  headers: TraceHeaders | undefined;
  /** Present on requests; a plain subscriber receives the request but cannot answer it. */
  reply?: (outcome: ReplyOutcome) => void;
}

interface Listener {
  pattern: string;
  queueGroup: string | undefined;
  active: boolean;
  mailbox: Delivery[];
  drainScheduled: boolean;
  handle(delivery: Delivery): void;
}

interface StoredItem {
  seq: number;
  body: string;
  headers: TraceHeaders | undefined;
  deliveryCount: number;
  state: 'ready' | 'waiting' | 'delivered';
  /** Increments per delivery, so a stale delivery's nak or working() changes nothing. */
  delivery: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface QueueConsumer {
  handler: (item: WorkItem) => Promise<void>;
  concurrency: number;
  running: number;
  active: boolean;
}

interface QueueState {
  name: string;
  /** Stored items in enqueue order (a Map iterates in insertion order). */
  items: Map<number, StoredItem>;
  /** msgId → when it leaves the dedupe window. */
  seenMessageIds: Map<string, number>;
  consumers: QueueConsumer[];
  ackWaitMs: number;
  rotation: number;
  dispatchScheduled: boolean;
}

const DEFAULT_ACK_WAIT_MS = 30_000;

let lastSequence = 0;

/**
 * The next work item sequence, shared by every queue of every bus in the process: above the
 * last one issued and at least Date.now() × 1000, so a restarted process numbers its items
 * above the previous process's (the all-in-one inbox, in PGlite, outlives the bus and orders
 * waiting messages by it), unless that one issued over 1,000 a millisecond on average or the
 * clock went back. Safe integers until the year 2255.
 */
function nextSequence(): number {
  lastSequence = Math.max(lastSequence + 1, Date.now() * 1000);
  return lastSequence;
}

/**
 * The in-process bus for the all-in-one mode and tests: the same subject semantics, ordering,
 * request/reply errors and work-queue behaviour as the NATS adapter (one contract suite runs
 * against both), with nothing durable beyond the process.
 */
export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const dedupeWindowMs = options.dedupeWindowMs ?? 120_000;
  const defaultRequestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  const logger = options.logger ?? defaultBusLogger();
  const listeners = new Set<Listener>();
  const queues = new Map<string, QueueState>();
  const pendingRequests = new Set<(error: Error) => void>();
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new BusUnavailableError('the in-process bus is closed');
  }

  // Handlers always run from the event loop, never inside publish(): a handler that publishes
  // cannot re-enter itself, and a publisher is never blocked by its subscribers.
  function post(listener: Listener, delivery: Delivery): void {
    listener.mailbox.push(delivery);
    if (listener.drainScheduled) return;
    listener.drainScheduled = true;
    setImmediate(() => {
      listener.drainScheduled = false;
      while (listener.active) {
        const next = listener.mailbox.shift();
        if (next === undefined) break;
        context.with(traceContextOf(next.headers), () => listener.handle(next));
      }
    });
  }

  /** Delivers to every matching listener, but to one member per queue group; returns how many. */
  function route(delivery: Delivery): number {
    const groups = new Map<string, Listener[]>();
    let recipients = 0;
    for (const listener of listeners) {
      if (!listener.active || !subjectMatches(listener.pattern, delivery.subject)) continue;
      if (listener.queueGroup === undefined) {
        post(listener, delivery);
        recipients++;
        continue;
      }
      const key = `${listener.pattern}\u0000${listener.queueGroup}`;
      const members = groups.get(key) ?? [];
      members.push(listener);
      groups.set(key, members);
    }
    for (const members of groups.values()) {
      const chosen = members[Math.floor(Math.random() * members.length)];
      if (chosen === undefined) continue;
      post(chosen, delivery);
      recipients++;
    }
    return recipients;
  }

  function addListener(
    pattern: string,
    queueGroup: string | undefined,
    handle: (delivery: Delivery) => void,
  ): Subscription {
    const listener: Listener = {
      pattern,
      queueGroup,
      active: true,
      mailbox: [],
      drainScheduled: false,
      handle,
    };
    listeners.add(listener);
    return {
      async stop() {
        listener.active = false;
        listener.mailbox.length = 0;
        listeners.delete(listener);
      },
    };
  }

  function queueState(name: string): QueueState {
    let state = queues.get(name);
    if (state === undefined) {
      state = {
        name,
        items: new Map(),
        seenMessageIds: new Map(),
        consumers: [],
        ackWaitMs: DEFAULT_ACK_WAIT_MS,
        rotation: 0,
        dispatchScheduled: false,
      };
      queues.set(name, state);
    }
    return state;
  }

  function scheduleDispatch(state: QueueState): void {
    if (state.dispatchScheduled || closed) return;
    state.dispatchScheduled = true;
    setImmediate(() => {
      state.dispatchScheduled = false;
      dispatch(state);
    });
  }

  function freeConsumer(state: QueueState): QueueConsumer | undefined {
    const count = state.consumers.length;
    for (let offset = 0; offset < count; offset++) {
      const consumer = state.consumers[(state.rotation + offset) % count];
      if (consumer?.active && consumer.running < consumer.concurrency) {
        state.rotation = (state.rotation + offset + 1) % count;
        return consumer;
      }
    }
    return undefined;
  }

  function dispatch(state: QueueState): void {
    if (closed) return;
    for (const item of state.items.values()) {
      if (item.state !== 'ready') continue;
      const consumer = freeConsumer(state);
      if (consumer === undefined) return;
      deliver(state, item, consumer);
    }
  }

  function setTimer(item: StoredItem, delayMs: number, then: () => void): void {
    clearTimeout(item.timer);
    item.timer = setTimeout(then, delayMs);
    // The in-process bus must never be what keeps a finished process alive.
    item.timer.unref();
  }

  function makeReady(state: QueueState, item: StoredItem): void {
    clearTimeout(item.timer);
    item.timer = undefined;
    item.state = 'ready';
    scheduleDispatch(state);
  }

  function deliver(state: QueueState, item: StoredItem, consumer: QueueConsumer): void {
    item.state = 'delivered';
    item.deliveryCount++;
    const delivery = ++item.delivery;
    const isCurrent = () =>
      state.items.get(item.seq) === item &&
      item.state === 'delivered' &&
      item.delivery === delivery;
    setTimer(item, state.ackWaitMs, () => {
      if (isCurrent()) makeReady(state, item);
    });
    const nak = async (delayMs = 0) => {
      if (!isCurrent()) return;
      if (delayMs <= 0) return makeReady(state, item);
      item.state = 'waiting';
      setTimer(item, delayMs, () => makeReady(state, item));
    };
    const workItem: WorkItem = {
      data: decodePayload(item.body),
      deliveryCount: item.deliveryCount,
      sequence: item.seq,
      async ack() {
        // Any delivery may settle the item while it is stored, as a JetStream ack would.
        if (state.items.get(item.seq) !== item) return;
        clearTimeout(item.timer);
        state.items.delete(item.seq);
      },
      nak,
      async working() {
        if (!isCurrent()) return;
        setTimer(item, state.ackWaitMs, () => {
          if (isCurrent()) makeReady(state, item);
        });
      },
    };
    consumer.running++;
    setImmediate(() => {
      context
        .with(traceContextOf(item.headers), () =>
          Promise.resolve().then(() => consumer.handler(workItem)),
        )
        .catch(async (error: unknown) => {
          logger.warn({ queue: state.name, err: error }, 'work item handler failed; redelivering');
          await nak(failedItemDelayMs(item.deliveryCount));
        })
        .finally(() => {
          consumer.running--;
          scheduleDispatch(state);
        });
    });
  }

  return {
    async publish(subject, payload) {
      assertOpen();
      assertValidSubject(subject, { wildcards: false });
      route({ subject, body: encodePayload(payload), headers: activeTraceHeaders() });
    },

    async subscribe(pattern, handler) {
      assertOpen();
      assertValidSubject(pattern, { wildcards: true });
      return addListener(pattern, undefined, ({ subject, body }) => {
        deliverEvent(handler, decodePayload(body), subject, logger);
      });
    },

    async request(subject, payload, requestOptions) {
      assertOpen();
      assertValidSubject(subject, { wildcards: false });
      const body = encodePayload(payload);
      const timeoutMs = requestOptions?.timeoutMs ?? defaultRequestTimeoutMs;
      return new Promise<unknown>((resolve, reject) => {
        let settled = false;
        const settle = (action: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          pendingRequests.delete(abort);
          action();
        };
        const abort = (error: Error) => settle(() => reject(error));
        const timer = setTimeout(
          () => abort(new RequestTimeoutError(subject, timeoutMs)),
          timeoutMs,
        );
        pendingRequests.add(abort);
        const recipients = route({
          subject,
          body,
          headers: activeTraceHeaders(),
          reply: (outcome) =>
            settle(() =>
              outcome.ok
                ? resolve(decodePayload(outcome.body))
                : reject(fromRemoteError(outcome.error, subject)),
            ),
        });
        if (recipients === 0) abort(new NoRespondersError(subject));
      });
    },

    async serve(subject, handler, serveOptions) {
      assertOpen();
      assertValidSubject(subject, { wildcards: true });
      return addListener(subject, serveOptions?.queue, ({ subject: actual, body, reply }) => {
        // Encoding is a step of its own, so a reply that cannot be encoded is answered as the
        // handler's failure instead of escaping as an unhandled rejection.
        Promise.resolve()
          .then(() => handler(decodePayload(body), actual))
          .then(encodeReply)
          .then(
            (encoded) => reply?.({ ok: true, body: encoded }),
            (error: unknown) => reply?.({ ok: false, error: toRemoteError(error) }),
          );
      });
    },

    async enqueue(queue, payload, enqueueOptions) {
      assertOpen();
      assertValidQueueName(queue);
      const body = encodePayload(payload);
      const state = queueState(queue);
      const now = Date.now();
      for (const [messageId, expiresAt] of state.seenMessageIds) {
        // Entries are in insertion order, hence in expiry order: stop at the first live one.
        if (expiresAt > now) break;
        state.seenMessageIds.delete(messageId);
      }
      if (state.seenMessageIds.has(enqueueOptions.msgId)) return;
      state.seenMessageIds.set(enqueueOptions.msgId, now + dedupeWindowMs);
      const seq = nextSequence();
      state.items.set(seq, {
        seq,
        body,
        headers: activeTraceHeaders(),
        deliveryCount: 0,
        state: 'ready',
        delivery: 0,
        timer: undefined,
      });
      scheduleDispatch(state);
    },

    async consume(queue, handler, consumeOptions) {
      assertOpen();
      assertValidQueueName(queue);
      const state = queueState(queue);
      if (consumeOptions?.ackWaitMs !== undefined) state.ackWaitMs = consumeOptions.ackWaitMs;
      const consumer: QueueConsumer = {
        handler,
        concurrency: Math.max(1, consumeOptions?.concurrency ?? 1),
        running: 0,
        active: true,
      };
      state.consumers.push(consumer);
      scheduleDispatch(state);
      return {
        async stop() {
          consumer.active = false;
          state.consumers = state.consumers.filter((other) => other !== consumer);
        },
      };
    },

    async ready() {
      return !closed;
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const listener of listeners) listener.active = false;
      listeners.clear();
      for (const state of queues.values()) {
        for (const item of state.items.values()) clearTimeout(item.timer);
      }
      for (const abort of [...pendingRequests]) {
        abort(new BusUnavailableError('the in-process bus was closed'));
      }
    },
  };
}
