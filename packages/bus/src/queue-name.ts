import { InvalidInputError } from '@chunklog/chunk-core';

// Queue names become JetStream stream and consumer names, which allow no '.', '*', '>' or spaces.
const queueNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Refuses a queue name that could not name a JetStream stream. */
export function assertValidQueueName(queue: string): void {
  if (!queueNamePattern.test(queue)) {
    throw new InvalidInputError(`invalid queue name "${queue}": use 1-64 of A-Z a-z 0-9 _ -`);
  }
}

/** How long to wait before redelivering an item whose handler threw: doubling, capped at 30 s. */
export function failedItemDelayMs(deliveryCount: number): number {
  return Math.min(30_000, 500 * 2 ** Math.min(10, Math.max(0, deliveryCount - 1)));
}
