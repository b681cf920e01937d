import type { Bus } from './bus';
import type { BusLogger } from './bus-logger';

type EventHandler = Parameters<Bus['subscribe']>[1];

/**
 * Runs a subscriber's handler on one event. A handler that throws or rejects is logged: it
 * cannot fail the publisher, which never waits for subscribers.
 */
export function deliverEvent(
  handler: EventHandler,
  payload: unknown,
  subject: string,
  logger: BusLogger,
): void {
  const failed = (error: unknown) =>
    logger.error({ subject, err: error }, 'subscription handler failed');
  try {
    const result: unknown = handler(payload, subject);
    if (result instanceof Promise) result.catch(failed);
  } catch (error) {
    failed(error);
  }
}
