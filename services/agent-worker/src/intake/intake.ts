import type { WorkItem } from '@chunklog/bus';
import {
  describeError,
  InvalidInputError,
  MessageCommandSchema,
  NotFoundError,
} from '@chunklog/chunk-core';
import { inSpan } from '@chunklog/runtime';
import type { InboxStore } from '@chunklog/store';
import { type Span, SpanKind } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { StoredMessage } from '../claim/claim';
import type { StoreHealth } from '../health/store-health';
import { untilStoreAnswers } from '../health/wait-out-outage';
import type { MessagesBeingStored } from './messages-being-stored';

/** Ends the wait for the store when the worker stops: the item goes back to the queue. */
class StoppingError extends Error {}

/**
 * Handles one intake item: stores the message in its tab's inbox, acks it only once it is
 * durable in Postgres, and claims the tab. While the store is unreachable the item is held (not
 * redelivered) until it answers; only a message the store refuses is dropped.
 */
export function createIntake(deps: {
  store: Pick<InboxStore, 'inboxPut'>;
  logger: Logger;
  health: StoreHealth;
  /** Claims the tab of a message just stored (see Claimer.claim). */
  claim: (tabId: string, stored?: StoredMessage) => Promise<void>;
  /** Records a message the store refuses as an error in its tab; false when the tab is busy. */
  refuse: (tabId: string, chunkId: string, why: string) => Promise<boolean>;
  stopping: () => boolean;
  /** Where the messages being stored are counted, so a claim picks its opener after them. */
  beingStored: MessagesBeingStored;
}): (item: WorkItem) => Promise<void> {
  const { store, logger, claim } = deps;
  // A span per delivery, in the trace of the request that enqueued the message (the bus runs
  // this handler in it); the turn the claim launches is its child.
  return (item) =>
    inSpan(
      'chunklog.intake',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.operation.type': 'process',
          'messaging.destination.name': 'intake',
          'chunklog.delivery_count': item.deliveryCount,
        },
      },
      (span) => handle(item, span),
    );

  async function handle(item: WorkItem, span: Span): Promise<void> {
    const parsed = MessageCommandSchema.safeParse(item.data);
    if (!parsed.success) {
      logger.error({ err: parsed.error }, 'malformed intake message dropped');
      await item.ack();
      return;
    }
    const { tabId, chunkId, text, mode, cancelGeneration } = parsed.data;
    span.setAttributes({ 'chunklog.tab_id': tabId, 'chunklog.chunk_id': chunkId });
    try {
      // Idempotent by chunkId: a redelivered message finds itself stored and changes nothing.
      // Items are stored concurrently (here and by other workers), so one accepted later can be
      // stored first: the item's queue sequence keeps the inbox in the order they were accepted.
      await deps.beingStored.track(tabId, () =>
        untilStoreAnswers(
          'storing a message',
          () =>
            store.inboxPut({
              tabId,
              chunkId,
              text,
              mode,
              intakeSeq: item.sequence,
              ...(cancelGeneration === undefined ? {} : { cancelGeneration }),
            }),
          {
            health: deps.health,
            logger: logger.child({ tabId, chunkId }),
            giveUp: () => (deps.stopping() ? new StoppingError() : null),
            whileWaiting: () => item.working(),
          },
        ),
      );
    } catch (error) {
      if (error instanceof StoppingError) {
        await item.nak();
        return;
      }
      if (error instanceof NotFoundError) {
        // The tab is gone: there is nowhere to store the message, nor to say so.
        logger.warn({ err: error, tabId, chunkId }, 'intake message dropped: its tab is gone');
        await item.ack();
        return;
      }
      // A message the store refuses (or keeps failing on) will not get better by waiting: it
      // ends as an error in its tab, once the tab is free to take one.
      if (error instanceof InvalidInputError || item.deliveryCount >= 10) {
        await refuse(item, tabId, chunkId, error);
        return;
      }
      await item.nak(1000);
      return;
    }
    await item.ack();
    await claim(tabId, {
      chunkId,
      mode,
      ...(cancelGeneration === undefined ? {} : { cancelGeneration }),
    });
  }

  async function refuse(item: WorkItem, tabId: string, chunkId: string, error: unknown) {
    let recorded = false;
    try {
      recorded = await deps.refuse(tabId, chunkId, describeError(error));
    } catch (refusalError) {
      logger.warn({ err: refusalError, tabId, chunkId }, 'could not record a refused message');
    }
    if (recorded) {
      logger.warn({ err: error, tabId, chunkId }, 'intake message refused by the store');
    } else if (item.deliveryCount >= 200) {
      logger.error({ err: error, tabId, chunkId }, 'intake message dropped');
    } else {
      await item.nak(2000);
      return;
    }
    await item.ack();
  }
}
