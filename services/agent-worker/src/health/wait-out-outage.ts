import { isDatabaseUnreachable } from '@chunklog/chunk-core';
import type { Logger } from 'pino';
import type { StoreHealth } from './store-health';

export interface OutagePatience {
  health: StoreHealth;
  logger: Logger;
  /** Checked before each wait: an error to end the wait with (the lease is lost, the worker stops). */
  giveUp: () => Error | null;
  /** Run before each wait (keeping a queue item from being redelivered, for one). */
  whileWaiting?: () => Promise<void>;
}

const MAX_WAIT_MS = 1_000;

/**
 * Runs a store call until the store answers: a call that failed because the database could not
 * be reached is made again (after 50 ms, doubling to 1 s) for as long as the outage lasts,
 * unless `giveUp` says otherwise. Any answer, an error one included, ends the wait.
 */
export async function untilStoreAnswers<T>(
  what: string,
  call: () => Promise<T>,
  patience: OutagePatience,
): Promise<T> {
  const { health, logger } = patience;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await call();
      health.report();
      if (attempt > 1)
        logger.info({ attempts: attempt }, `store reachable again: ${what} went through`);
      return result;
    } catch (error) {
      health.report(error);
      if (!isDatabaseUnreachable(error)) throw error;
      const reason = patience.giveUp();
      if (reason) throw reason;
      if (attempt === 1) logger.warn({ err: error }, `store unreachable: ${what} waits for it`);
      await patience.whileWaiting?.().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_WAIT_MS, 50 * 2 ** attempt)));
    }
  }
}

/** A store (or a slice of one), every call of which waits out an outage (see untilStoreAnswers). */
export function patientStore<Store extends object>(store: Store, patience: OutagePatience): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        untilStoreAnswers(String(property), () => value.apply(target, args), patience);
    },
  });
}
