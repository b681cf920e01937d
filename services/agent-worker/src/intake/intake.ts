import type { WorkItem } from '@chunklog/bus';
import { InvalidInputError, MessageCommandSchema, NotFoundError } from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import type { Logger } from 'pino';

/**
 * Handles one item of the durable intake queue: stores the message in its tab's inbox, acks
 * the item only once the message is durable in Postgres (from then on the inbox and the sweep
 * own it), and claims the tab.
 */
export function createIntake(deps: {
  store: ChunkStore;
  logger: Logger;
  claim: (tabId: string) => Promise<void>;
}): (item: WorkItem) => Promise<void> {
  const { store, logger, claim } = deps;
  return async (item) => {
    const parsed = MessageCommandSchema.safeParse(item.data);
    if (!parsed.success) {
      logger.error({ err: parsed.error }, 'malformed intake message dropped');
      await item.ack();
      return;
    }
    const { tabId, chunkId, text, mode, cancelGeneration } = parsed.data;
    try {
      // Idempotent by chunkId: a redelivered message finds itself stored and changes nothing.
      // Items are stored concurrently (here and by other workers), so one accepted later can be
      // stored first: the item's queue sequence keeps the inbox in the order they were accepted.
      await store.inboxPut({
        tabId,
        chunkId,
        text,
        mode,
        intakeSeq: item.sequence,
        ...(cancelGeneration === undefined ? {} : { cancelGeneration }),
      });
    } catch (error) {
      // A deleted tab or a message the store can never hold will not get better by waiting.
      const permanent = error instanceof NotFoundError || error instanceof InvalidInputError;
      if (permanent || item.deliveryCount >= 10) {
        logger.warn({ err: error, tabId, chunkId }, 'intake message dropped');
        await item.ack();
        return;
      }
      await item.nak(1000);
      return;
    }
    await item.ack();
    await claim(tabId);
  };
}
