import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { isJetStreamError } from './nats-errors';
import type { NatsNames } from './nats-names';

const DEFAULT_ACK_WAIT_MS = 30_000;

/** Creates a work queue's stream and consumer on first use, and again when the server lost them. */
export interface JetStreamProvisioning {
  /** The queue's stream exists (checked once per process unless forgotten). */
  ensureStream(queue: string): Promise<void>;
  /** The queue's stream and its durable consumer exist, with this ack wait when given. */
  ensureConsumer(queue: string, ackWaitMs: number | undefined): Promise<void>;
  /** The server lost the queue's stream: check it again on next use. */
  forget(queue: string): void;
}

export function createJetStreamProvisioning(options: {
  manager: JetStreamManager;
  names: NatsNames;
  /** The stream's duplicate window for enqueue msgIds. */
  dedupeWindowMs: number;
  /** Servers holding each stream; an existing stream keeps the count it was created with. */
  streamReplicas: number;
}): JetStreamProvisioning {
  const { manager, names } = options;
  const streamsEnsured = new Map<string, Promise<void>>();

  /** Whether the stream exists, asking a few times while a racing creator may still be at it. */
  async function streamAppears(name: string): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        await manager.streams.info(name);
        return true;
      } catch (error) {
        if (!isJetStreamError(error, JetStreamApiCodes.StreamNotFound)) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
    }
    return false;
  }

  function ensureStream(queue: string): Promise<void> {
    let ensured = streamsEnsured.get(queue);
    if (ensured === undefined) {
      ensured = (async () => {
        const name = names.stream(queue);
        try {
          await manager.streams.info(name);
          return;
        } catch (error) {
          if (!isJetStreamError(error, JetStreamApiCodes.StreamNotFound)) throw error;
        }
        try {
          await manager.streams.add({
            name,
            subjects: [names.queueSubject(queue)],
            retention: RetentionPolicy.Workqueue,
            storage: StorageType.File,
            duplicate_window: nanos(options.dedupeWindowMs),
            num_replicas: options.streamReplicas,
          });
        } catch (error) {
          // Adding a stream with the same config is idempotent, but a creator racing another
          // process's add of the same stream can be refused ("subjects overlap with an existing
          // stream") while the server is still making it: the stream then exists, made by the other.
          if (!(await streamAppears(name))) throw error;
        }
      })();
      streamsEnsured.set(queue, ensured);
      ensured.catch(() => streamsEnsured.delete(queue));
    }
    return ensured;
  }

  async function ensureConsumer(queue: string, ackWaitMs: number | undefined): Promise<void> {
    await ensureStream(queue);
    const stream = names.stream(queue);
    const durable = names.consumer(queue);
    try {
      const info = await manager.consumers.info(stream, durable);
      if (ackWaitMs !== undefined && info.config.ack_wait !== nanos(ackWaitMs)) {
        await manager.consumers.update(stream, durable, { ack_wait: nanos(ackWaitMs) });
      }
      return;
    } catch (error) {
      if (!isJetStreamError(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
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

  return { ensureStream, ensureConsumer, forget: (queue) => streamsEnsured.delete(queue) };
}
