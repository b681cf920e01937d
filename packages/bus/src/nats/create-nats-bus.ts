import { InvalidInputError } from '@chunklog/chunk-core';
import { headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { context } from '@opentelemetry/api';
import type { Bus, Subscription } from '../bus';
import { type BusLogger, defaultBusLogger } from '../bus-logger';
import { deliverEvent } from '../deliver-event';
import { decodePayload, encodePayload, encodeReply } from '../json-payload';
import { fromRemoteError, RemoteErrorSchema, toRemoteError } from '../remote-error';
import { assertValidSubject } from '../subject-matches';
import { openNatsLink } from './nats-connection';
import { toBusError, toRequestError } from './nats-errors';
import { natsNames } from './nats-names';
import { activeNatsTraceHeaders, natsTraceContextOf } from './nats-trace-headers';
import { createNatsWorkQueue } from './nats-work-queue';

export interface NatsBusOptions {
  servers: string | string[];
  /**
   * Prepended to every subject ("<prefix>.<subject>"), stream and consumer name ("<prefix>_...")
   * so that several deployments or test files share one server without crossing.
   */
  subjectPrefix?: string;
  /** Connection name shown by the server's monitoring. */
  name?: string;
  /** The process's pino logger (or a child); without one, JSON lines on stdout. */
  logger?: BusLogger;
  /** JetStream duplicate window for enqueue msgIds, set when a queue's stream is created. */
  dedupeWindowMs?: number;
  /** How many servers of a JetStream cluster hold each queue's stream (set when created); 1. */
  streamReplicas?: number;
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

/**
 * The bus on NATS: core NATS for live events and request/reply, a JetStream work queue for
 * enqueue/consume. The client reconnects forever; subscriptions and consumers resume.
 */
export async function createNatsBus(options: NatsBusOptions): Promise<Bus> {
  const logger = options.logger ?? defaultBusLogger();
  const names = natsNames(options.subjectPrefix ?? '');
  const defaultRequestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  const link = await openNatsLink({
    servers: options.servers,
    name: options.name ?? 'chunklog',
    reconnectWaitMs: options.reconnectWaitMs ?? 1_000,
    jetStreamTimeoutMs: options.jetStreamTimeoutMs ?? 5_000,
    logger,
  });
  const { connection } = link;
  const workQueue = createNatsWorkQueue({
    link,
    names,
    logger,
    dedupeWindowMs: options.dedupeWindowMs ?? 120_000,
    streamReplicas: options.streamReplicas ?? 1,
    pullExpiresMs: options.pullExpiresMs ?? 5_000,
  });
  let closing = false;

  /** Subscribes on the wire (prefix added) and resolves once the server has the subscription. */
  async function listen(
    pattern: string,
    queue: string | undefined,
    callback: (error: Error | null, message: Msg) => void,
  ): Promise<Subscription> {
    let subscription: ReturnType<NatsConnection['subscribe']>;
    try {
      subscription = connection.subscribe(names.toWire(pattern), { queue, callback });
    } catch (error) {
      throw toBusError(error, `subscribing to ${pattern}`);
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
        const traceHeaders = activeNatsTraceHeaders();
        connection.publish(
          names.toWire(subject),
          encodePayload(payload),
          traceHeaders ? { headers: traceHeaders } : undefined,
        );
      } catch (error) {
        throw toBusError(error, `publishing to ${subject}`);
      }
    },

    async subscribe(pattern, handler) {
      assertValidSubject(pattern, { wildcards: true });
      return listen(pattern, undefined, (error, message) => {
        if (error !== null) {
          logger.error({ pattern, err: error }, 'subscription failed');
          return;
        }
        const subject = names.fromWire(message.subject);
        let payload: unknown;
        try {
          payload = decodePayload(message.string());
        } catch (parseError) {
          logger.warn({ subject, err: parseError }, 'dropped a message that is not JSON');
          return;
        }
        context.with(natsTraceContextOf(message.headers), () =>
          deliverEvent(handler, payload, subject, logger),
        );
      });
    },

    async request(subject, payload, requestOptions) {
      assertValidSubject(subject, { wildcards: false });
      const timeoutMs = requestOptions?.timeoutMs ?? defaultRequestTimeoutMs;
      let reply: Awaited<ReturnType<NatsConnection['request']>>;
      try {
        const traceHeaders = activeNatsTraceHeaders();
        reply = await connection.request(names.toWire(subject), encodePayload(payload), {
          timeout: timeoutMs,
          ...(traceHeaders ? { headers: traceHeaders } : {}),
        });
      } catch (error) {
        throw toRequestError(error, subject, timeoutMs);
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
          logger.error({ subject, err: error }, 'serving subscription failed');
          return;
        }
        const respondWithError = (failure: unknown) => {
          const errorHeaders = headers();
          errorHeaders.set(ERROR_REPLY_HEADER, '1');
          message.respond(encodePayload(toRemoteError(failure)), { headers: errorHeaders });
        };
        // The handler continues the requester's trace: the whole chain is built in its context.
        context.with(natsTraceContextOf(message.headers), () =>
          Promise.resolve()
            .then(() => {
              let payload: unknown;
              try {
                payload = decodePayload(message.string());
              } catch (parseError) {
                throw new InvalidInputError('request payload is not JSON', { cause: parseError });
              }
              return handler(payload, names.fromWire(message.subject));
            })
            // Encoding is a step of its own, so a reply that cannot be encoded is answered as the
            // handler's failure instead of leaving the requester to time out.
            .then(encodeReply)
            .then(
              (encoded) => message.respond(encoded),
              (failure: unknown) => respondWithError(failure),
            )
            .catch((respondError: unknown) =>
              logger.warn({ subject, err: respondError }, 'could not send a reply'),
            ),
        );
      });
    },

    enqueue: workQueue.enqueue,
    consume: workQueue.consume,
    ready: link.ready,

    async close() {
      if (closing) return;
      closing = true;
      await workQueue.stopConsumers();
      await link.close();
    },
  };
}
