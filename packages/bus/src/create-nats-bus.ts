import { ChunklogError, InvalidInputError } from '@chunklog/chunk-core';
import {
  AckPolicy,
  type Consumer,
  type ConsumerMessages,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import {
  ClosedConnectionError,
  connect,
  DrainingConnectionError,
  headers,
  type Msg,
  type NatsConnection,
  NoRespondersError as NatsNoRespondersError,
  nanos,
  RequestError,
  type Status,
  TimeoutError,
} from '@nats-io/transport-node';
import type { Bus, Subscription, WorkItem } from './bus';
import { BusUnavailableError, NoRespondersError, RequestTimeoutError } from './bus-errors';
import { type BusLogger, consoleBusLogger } from './bus-logger';
import { decodePayload, encodePayload, encodeReply } from './json-payload';
import { assertValidQueueName, failedItemDelayMs } from './queue-name';
import { fromRemoteError, RemoteErrorSchema, toRemoteError } from './remote-error';
import { assertValidSubject } from './subject-matches';

export interface NatsBusOptions {
  servers: string | string[];
  /**
   * Prepended to every subject ("<prefix>.<subject>"), stream and consumer name ("<prefix>_...")
   * so that several deployments or test files share one server without crossing.
   */
  subjectPrefix?: string;
  /** Connection name shown by the server's monitoring. */
  name?: string;
  logger?: BusLogger;
  /** JetStream duplicate window for enqueue msgIds, set when a queue's stream is created. */
  dedupeWindowMs?: number;
  /** Default reply timeout of request(). */
  requestTimeoutMs?: number;
  /** Wait between reconnect attempts (plus up to 250 ms of jitter); attempts never stop. */
  reconnectWaitMs?: number;
  /** How long one pull for work items stays open; bounds how fast a consumer notices a restart. */
  pullExpiresMs?: number;
  /** How long a JetStream call (an enqueue's publish ack, stream set-up) waits; default 5 s. */
  jetStreamTimeoutMs?: number;
}

/** Header that marks a reply as a failure of the serving handler (body: `{ code, message }`). */
export const ERROR_REPLY_HEADER = 'Chunklog-Error';

const DEFAULT_ACK_WAIT_MS = 30_000;
const namePattern = /^[A-Za-z0-9_-]+$/;

/**
 * The bus on NATS: core NATS for live events and request/reply, a JetStream work queue (a
 * file-backed stream with WorkQueue retention and one durable pull consumer per queue) for
 * enqueue/consume. The client reconnects forever; subscriptions and consumers resume.
 */
export async function createNatsBus(options: NatsBusOptions): Promise<Bus> {
  const logger = options.logger ?? consoleBusLogger;
  const prefix = options.subjectPrefix ?? '';
  if (prefix !== '' && !namePattern.test(prefix)) {
    throw new InvalidInputError(`invalid subject prefix "${prefix}": use A-Z a-z 0-9 _ -`);
  }
  const subjectPrefix = prefix === '' ? '' : `${prefix}.`;
  const namePrefix = prefix === '' ? '' : `${prefix}_`;
  const dedupeWindowMs = options.dedupeWindowMs ?? 120_000;
  const defaultRequestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  const pullExpiresMs = options.pullExpiresMs ?? 5_000;

  const connection: NatsConnection = await connect({
    servers: options.servers,
    name: options.name ?? 'chunklog',
    maxReconnectAttempts: -1,
    reconnectTimeWait: options.reconnectWaitMs ?? 1_000,
    reconnectJitter: 250,
    // Notice a silently dead server within ~30 s rather than the default 4 minutes.
    pingInterval: 10_000,
    maxPingOut: 3,
  });
  const jetStreamTimeoutMs = options.jetStreamTimeoutMs ?? 5_000;
  const jetStreamClient = jetstream(connection, { timeout: jetStreamTimeoutMs });
  let manager: JetStreamManager;
  try {
    manager = await jetstreamManager(connection, { timeout: jetStreamTimeoutMs });
  } catch (error) {
    await connection.close();
    throw new BusUnavailableError('JetStream is not enabled on the NATS server', { cause: error });
  }

  let connected = true;
  let closing = false;
  void watchStatus(connection.status());
  const consumeLoops = new Set<Subscription>();
  const streamsEnsured = new Map<string, Promise<void>>();

  async function watchStatus(statuses: AsyncIterable<Status>): Promise<void> {
    for await (const status of statuses) {
      switch (status.type) {
        case 'disconnect':
          connected = false;
          logger.warn({ server: status.server }, 'NATS disconnected; reconnecting');
          break;
        case 'reconnect':
          connected = true;
          logger.info({ server: status.server }, 'NATS reconnected');
          break;
        case 'error':
          logger.error({ error: status.error }, 'NATS error');
          break;
        case 'slowConsumer':
          logger.warn({ pending: status.pending }, 'NATS subscription is a slow consumer');
          break;
        case 'close':
          connected = false;
          break;
        case 'reconnecting':
        case 'update':
        case 'ldm':
        case 'ping':
        case 'staleConnection':
        case 'forceReconnect':
          break;
        default: {
          const unreachable: never = status;
          logger.warn({ status: unreachable }, 'unknown NATS status');
        }
      }
    }
  }

  const toWire = (subject: string) => subjectPrefix + subject;
  const fromWire = (subject: string) =>
    subject.startsWith(subjectPrefix) ? subject.slice(subjectPrefix.length) : subject;
  const streamName = (queue: string) => `${namePrefix}${queue}`;
  const consumerName = (queue: string) => `${namePrefix}${queue}-consumers`;
  const queueSubject = (queue: string) => toWire(`chunklog.queue.${queue}`);

  function unavailable(error: unknown, doing: string): unknown {
    if (error instanceof ChunklogError) return error;
    if (
      error instanceof ClosedConnectionError ||
      error instanceof DrainingConnectionError ||
      error instanceof RequestError ||
      error instanceof TimeoutError
    ) {
      return new BusUnavailableError(`NATS unavailable while ${doing}: ${error.message}`, {
        cause: error,
      });
    }
    return error;
  }

  /** Whether a failure (or one of its causes) is NATS saying nobody listens on the subject. */
  function hasNoResponders(error: unknown): boolean {
    for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
      if (cause instanceof NatsNoRespondersError) return true;
      if (cause instanceof RequestError && cause.isNoResponders()) return true;
      cause = cause.cause;
    }
    return false;
  }

  function isNotFound(error: unknown, code: number): boolean {
    return error instanceof JetStreamApiError && error.code === code;
  }

  function ensureStream(queue: string): Promise<void> {
    let ensured = streamsEnsured.get(queue);
    if (ensured === undefined) {
      ensured = (async () => {
        const name = streamName(queue);
        try {
          await manager.streams.info(name);
          return;
        } catch (error) {
          if (!isNotFound(error, JetStreamApiCodes.StreamNotFound)) throw error;
        }
        // Adding a stream with the same config is idempotent, so racing creators both succeed.
        await manager.streams.add({
          name,
          subjects: [queueSubject(queue)],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          duplicate_window: nanos(dedupeWindowMs),
        });
      })();
      streamsEnsured.set(queue, ensured);
      ensured.catch(() => streamsEnsured.delete(queue));
    }
    return ensured;
  }

  async function ensureConsumer(queue: string, ackWaitMs: number | undefined): Promise<void> {
    await ensureStream(queue);
    const stream = streamName(queue);
    const durable = consumerName(queue);
    try {
      const info = await manager.consumers.info(stream, durable);
      if (ackWaitMs !== undefined && info.config.ack_wait !== nanos(ackWaitMs)) {
        await manager.consumers.update(stream, durable, { ack_wait: nanos(ackWaitMs) });
      }
      return;
    } catch (error) {
      if (!isNotFound(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
    }
    await manager.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
      // Redelivered until acked: a message the gateway accepted must never be dropped.
      max_deliver: -1,
      deliver_policy: DeliverPolicy.All,
    });
  }

  function toWorkItem(message: JsMsg, data: unknown): WorkItem & { settled: boolean } {
    const item = {
      data,
      deliveryCount: message.info.deliveryCount,
      // The stream sequence: assigned when JetStream stored the message, so in the order the
      // enqueues were acknowledged. A stream the server lost starts again at 1 (see README).
      sequence: message.seq,
      settled: false,
      async ack() {
        item.settled = true;
        // ackAck waits for the server, so a returned ack() means the item will not come back.
        await message.ackAck();
      },
      async nak(delayMs?: number) {
        item.settled = true;
        message.nak(delayMs);
      },
      async working() {
        message.working();
      },
    };
    return item;
  }

  async function handleMessage(
    queue: string,
    message: JsMsg,
    handler: (item: WorkItem) => Promise<void>,
  ): Promise<void> {
    let data: unknown;
    try {
      data = decodePayload(message.string());
    } catch (error) {
      // No consumer could ever process it; terminate rather than redeliver forever.
      logger.error({ queue, error, seq: message.seq }, 'malformed work item terminated');
      message.term();
      return;
    }
    const item = toWorkItem(message, data);
    try {
      await handler(item);
    } catch (error) {
      logger.warn({ queue, error }, 'work item handler failed; redelivering');
      if (!item.settled) message.nak(failedItemDelayMs(item.deliveryCount));
    }
  }

  const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** Subscribes on the wire (prefix added) and resolves once the server has the subscription. */
  async function listen(
    pattern: string,
    queue: string | undefined,
    callback: (error: Error | null, message: Msg) => void,
  ): Promise<Subscription> {
    let subscription: ReturnType<NatsConnection['subscribe']>;
    try {
      subscription = connection.subscribe(toWire(pattern), { queue, callback });
    } catch (error) {
      throw unavailable(error, `subscribing to ${pattern}`);
    }
    await confirmSubscribed();
    return {
      async stop() {
        if (!subscription.isClosed()) subscription.unsubscribe();
      },
    };
  }

  /**
   * A round trip after SUB: once the server answers, it has registered the subscription, so a
   * caller that subscribes and then reads Postgres (the gateway's resume) misses no event
   * published by another connection in between. While disconnected, the client re-subscribes
   * on reconnect anyway, so waiting is capped rather than hanging until the server is back.
   */
  async function confirmSubscribed(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      connection.flush().catch(() => undefined),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 2_000);
      }),
    ]);
    clearTimeout(timer);
  }

  return {
    async publish(subject, payload) {
      assertValidSubject(subject, { wildcards: false });
      try {
        connection.publish(toWire(subject), encodePayload(payload));
      } catch (error) {
        throw unavailable(error, `publishing to ${subject}`);
      }
    },

    async subscribe(pattern, handler) {
      assertValidSubject(pattern, { wildcards: true });
      return listen(pattern, undefined, (error, message) => {
        if (error !== null) {
          logger.error({ pattern, error }, 'subscription failed');
          return;
        }
        const subject = fromWire(message.subject);
        let payload: unknown;
        try {
          payload = decodePayload(message.string());
        } catch (parseError) {
          logger.warn({ subject, error: parseError }, 'dropped a message that is not JSON');
          return;
        }
        try {
          const result: unknown = handler(payload, subject);
          if (result instanceof Promise) {
            result.catch((handlerError: unknown) =>
              logger.error({ subject, error: handlerError }, 'subscription handler failed'),
            );
          }
        } catch (handlerError) {
          logger.error({ subject, error: handlerError }, 'subscription handler failed');
        }
      });
    },

    async request(subject, payload, requestOptions) {
      assertValidSubject(subject, { wildcards: false });
      const timeoutMs = requestOptions?.timeoutMs ?? defaultRequestTimeoutMs;
      let reply: Awaited<ReturnType<NatsConnection['request']>>;
      try {
        reply = await connection.request(toWire(subject), encodePayload(payload), {
          timeout: timeoutMs,
        });
      } catch (error) {
        const cause = error instanceof RequestError ? (error.cause ?? error) : error;
        if (
          cause instanceof NatsNoRespondersError ||
          (error instanceof RequestError && error.isNoResponders())
        ) {
          throw new NoRespondersError(subject, { cause: error });
        }
        if (cause instanceof TimeoutError) {
          throw new RequestTimeoutError(subject, timeoutMs, { cause: error });
        }
        throw unavailable(error, `requesting ${subject}`);
      }
      if (reply.headers?.get(ERROR_REPLY_HEADER)) {
        const remote = RemoteErrorSchema.safeParse(decodePayload(reply.string()));
        throw fromRemoteError(
          remote.success ? remote.data : { code: 'unavailable', message: 'malformed error reply' },
          subject,
        );
      }
      return decodePayload(reply.string());
    },

    async serve(subject, handler, serveOptions) {
      assertValidSubject(subject, { wildcards: true });
      return listen(subject, serveOptions?.queue, (error, message) => {
        if (error !== null) {
          logger.error({ subject, error }, 'serving subscription failed');
          return;
        }
        const respondWithError = (failure: unknown) => {
          const errorHeaders = headers();
          errorHeaders.set(ERROR_REPLY_HEADER, '1');
          message.respond(encodePayload(toRemoteError(failure)), { headers: errorHeaders });
        };
        Promise.resolve()
          .then(() => {
            let payload: unknown;
            try {
              payload = decodePayload(message.string());
            } catch (parseError) {
              throw new InvalidInputError('request payload is not JSON', { cause: parseError });
            }
            return handler(payload, fromWire(message.subject));
          })
          // Encoding is a step of its own, so a reply that cannot be encoded is answered as the
          // handler's failure instead of leaving the requester to time out.
          .then(encodeReply)
          .then(
            (encoded) => message.respond(encoded),
            (failure: unknown) => respondWithError(failure),
          )
          .catch((respondError: unknown) =>
            logger.warn({ subject, error: respondError }, 'could not send a reply'),
          );
      });
    },

    async enqueue(queue, payload, enqueueOptions) {
      assertValidQueueName(queue);
      const body = encodePayload(payload);
      // Known to be down: fail now rather than after the JetStream timeout, so the gateway answers
      // 503 at once. Nothing was sent, so nothing can be stored behind the caller's back.
      if (!connected || connection.isClosed()) {
        throw new BusUnavailableError(`NATS is disconnected: not enqueueing to ${queue}`);
      }
      const publish = async () => {
        await ensureStream(queue);
        // The stream stores a msgId once per duplicate window, so a retried enqueue is harmless.
        await jetStreamClient.publish(queueSubject(queue), body, { msgID: enqueueOptions.msgId });
      };
      try {
        try {
          await publish();
        } catch (error) {
          if (!hasNoResponders(error)) throw error;
          // No stream listens on the queue's subject: the server lost it (a restart without its
          // storage). A process that only enqueues (the gateway) has no consumer loop to notice,
          // so forget that the stream was ensured and build it again here.
          streamsEnsured.delete(queue);
          await publish();
        }
      } catch (error) {
        throw unavailable(error, `enqueueing to ${queue}`);
      }
    },

    async consume(queue, handler, consumeOptions) {
      assertValidQueueName(queue);
      const concurrency = Math.max(1, consumeOptions?.concurrency ?? 1);
      try {
        await ensureConsumer(queue, consumeOptions?.ackWaitMs);
      } catch (error) {
        throw unavailable(error, `starting a consumer of ${queue}`);
      }
      let stopped = false;
      const openPulls = new Set<ConsumerMessages>();
      // Fetches one item; stop() closes the pull, so a stopped consumer holds no pull request
      // on the server that could swallow a redelivery meant for another consumer.
      const next = async (consumer: Consumer): Promise<JsMsg | null> => {
        const pull = await consumer.fetch({ max_messages: 1, expires: pullExpiresMs });
        openPulls.add(pull);
        // A pull request that died with its server (a restart) never hears its expiry: end it
        // here, so the loop pulls again from the server that is up now. An item delivered just
        // then and not taken stays unacknowledged and is delivered again after ack_wait.
        const watchdog = setTimeout(
          () => pull.close().catch(() => undefined),
          pullExpiresMs + 2_000,
        );
        try {
          for await (const message of pull) return message;
          return null;
        } finally {
          clearTimeout(watchdog);
          openPulls.delete(pull);
        }
      };
      // One pull loop per slot: a slot only asks for an item when it is free, so no item waits
      // in a client-side buffer while its ack deadline runs out (that would deliver it twice).
      const pullOne = async () => {
        let failures = 0;
        while (!stopped && !connection.isClosed()) {
          try {
            const consumer = await jetStreamClient.consumers.get(
              streamName(queue),
              consumerName(queue),
            );
            while (!stopped) {
              const message = await next(consumer);
              if (message === null) continue;
              if (stopped) {
                // Pulled just as we stopped: hand it straight back instead of holding it.
                message.nak();
                break;
              }
              failures = 0;
              await handleMessage(queue, message, handler);
            }
          } catch (error) {
            if (stopped || connection.isClosed()) break;
            failures++;
            if (failures === 1 || failures % 20 === 0) {
              logger.warn({ queue, error, failures }, 'pulling work items failed; retrying');
            }
            if (
              isNotFound(error, JetStreamApiCodes.ConsumerNotFound) ||
              isNotFound(error, JetStreamApiCodes.StreamNotFound)
            ) {
              // The server lost the stream or consumer (a restart without storage): rebuild.
              streamsEnsured.delete(queue);
              await ensureConsumer(queue, consumeOptions?.ackWaitMs).catch(() => undefined);
            }
            await delay(Math.min(2_000, 100 * failures));
          }
        }
      };
      const loops = Array.from({ length: concurrency }, () => pullOne());
      const subscription: Subscription = {
        async stop() {
          stopped = true;
          consumeLoops.delete(subscription);
          await Promise.all([...openPulls].map((pull) => pull.close()));
          // Not awaited: a slot still running a handler keeps its item until the handler settles
          // it, as in the in-process bus; the slot then sees `stopped` and ends.
          void Promise.all(loops);
        },
      };
      consumeLoops.add(subscription);
      return subscription;
    },

    async ready() {
      if (!connected || connection.isClosed()) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), 1_000);
      });
      try {
        // A round trip proves the server answers, not merely that a socket is open.
        return await Promise.race([connection.rtt().then(() => true), timeout]);
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },

    async close() {
      if (closing) return;
      closing = true;
      await Promise.all([...consumeLoops].map((subscription) => subscription.stop()));
      if (connection.isClosed()) return;
      // Drain delivers what is in flight and flushes pending publishes; a dead link cannot drain.
      if (connected) await connection.drain().catch(() => connection.close());
      else await connection.close();
    },
  };
}
