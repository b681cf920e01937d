import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { context } from '@opentelemetry/api';
import type { Bus, Subscription, WorkItem } from '../bus';
import { BusUnavailableError } from '../bus-errors';
import type { BusLogger } from '../bus-logger';
import { decodePayload, encodePayload } from '../json-payload';
import { assertValidQueueName, failedItemDelayMs } from '../queue-name';
import { createJetStreamProvisioning } from './jetstream-provisioning';
import type { NatsLink } from './nats-connection';
import { hasNoResponders, isMissingStreamOrConsumer, toBusError } from './nats-errors';
import type { NatsNames } from './nats-names';
import { activeNatsTraceHeaders, natsTraceContextOf } from './nats-trace-headers';

/** The bus's work queue on JetStream: `enqueue` and `consume`, and stopping every consumer. */
export interface NatsWorkQueue extends Pick<Bus, 'enqueue' | 'consume'> {
  stopConsumers(): Promise<void>;
}

export interface NatsWorkQueueOptions {
  link: NatsLink;
  names: NatsNames;
  logger: BusLogger;
  dedupeWindowMs: number;
  streamReplicas: number;
  /** How long one pull for work items stays open; bounds how fast a consumer notices a restart. */
  pullExpiresMs: number;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How many times an enqueue publishes while no stream listens on its queue's subject before it
 * fails: 25, 50, 100 and 200 ms apart, time for a stream just created by another process to
 * start listening.
 */
const noListenerAttempts = 5;

/**
 * A work queue is a file-backed stream with WorkQueue retention and one durable pull consumer
 * shared by every consumer of the queue; each consumer slot pulls one item when it is free.
 */
export function createNatsWorkQueue(options: NatsWorkQueueOptions): NatsWorkQueue {
  const { link, names, logger, pullExpiresMs } = options;
  const { connection } = link;
  const provisioning = createJetStreamProvisioning({
    manager: link.manager,
    names,
    dedupeWindowMs: options.dedupeWindowMs,
    streamReplicas: options.streamReplicas,
  });
  const consumers = new Set<Subscription>();

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
      logger.error({ queue, err: error, seq: message.seq }, 'malformed work item terminated');
      message.term();
      return;
    }
    const item = toWorkItem(message, data);
    try {
      // The handler continues the enqueuer's trace.
      await context.with(natsTraceContextOf(message.headers), () => handler(item));
    } catch (error) {
      logger.warn({ queue, err: error }, 'work item handler failed; redelivering');
      if (!item.settled) message.nak(failedItemDelayMs(item.deliveryCount));
    }
  }

  return {
    async enqueue(queue, payload, enqueueOptions) {
      assertValidQueueName(queue);
      const body = encodePayload(payload);
      const traceHeaders = activeNatsTraceHeaders();
      // Known to be down: fail now rather than after the JetStream timeout, so the gateway answers
      // 503 at once. Nothing was sent, so nothing can be stored behind the caller's back.
      if (!link.isConnected()) {
        throw new BusUnavailableError(`NATS is disconnected: not enqueueing to ${queue}`);
      }
      const publish = async () => {
        await provisioning.ensureStream(queue);
        // The stream stores a msgId once per duplicate window, so a retried enqueue is harmless.
        await link.jetStream.publish(names.queueSubject(queue), body, {
          msgID: enqueueOptions.msgId,
          ...(traceHeaders ? { headers: traceHeaders } : {}),
        });
      };
      try {
        for (let attempt = 1; ; attempt += 1) {
          try {
            await publish();
            return;
          } catch (error) {
            if (!hasNoResponders(error) || attempt === noListenerAttempts) throw error;
            // No stream listens on the queue's subject. Either the server lost it (a restart
            // without its storage), and a process that only enqueues (the gateway) has no
            // consumer loop to notice, so it forgets the stream was ensured and builds it again
            // here; or another process has just created it, and the server answers for the
            // stream a moment before the stream listens on its subject: then the next attempt,
            // a little later, goes through.
            provisioning.forget(queue);
            await delay(25 * 2 ** (attempt - 1));
          }
        }
      } catch (error) {
        throw toBusError(error, `enqueueing to ${queue}`);
      }
    },

    async consume(queue, handler, consumeOptions) {
      assertValidQueueName(queue);
      const concurrency = Math.max(1, consumeOptions?.concurrency ?? 1);
      const ackWaitMs = consumeOptions?.ackWaitMs;
      try {
        await provisioning.ensureConsumer(queue, ackWaitMs);
      } catch (error) {
        throw toBusError(error, `starting a consumer of ${queue}`);
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
            const consumer = await link.jetStream.consumers.get(
              names.stream(queue),
              names.consumer(queue),
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
              logger.warn({ queue, err: error, failures }, 'pulling work items failed; retrying');
            }
            if (isMissingStreamOrConsumer(error)) {
              // The server lost the stream or consumer (a restart without storage): rebuild.
              provisioning.forget(queue);
              await provisioning.ensureConsumer(queue, ackWaitMs).catch(() => undefined);
            }
            await delay(Math.min(2_000, 100 * failures));
          }
        }
      };
      const loops = Array.from({ length: concurrency }, () => pullOne());
      const subscription: Subscription = {
        async stop() {
          stopped = true;
          consumers.delete(subscription);
          await Promise.all([...openPulls].map((pull) => pull.close()));
          // Not awaited: a slot still running a handler keeps its item until the handler settles
          // it, as in the in-process bus; the slot then sees `stopped` and ends.
          void Promise.all(loops);
        },
      };
      consumers.add(subscription);
      return subscription;
    },

    async stopConsumers() {
      await Promise.all([...consumers].map((subscription) => subscription.stop()));
    },
  };
}
