import { defaultLogger } from '@chunklog/runtime';

/**
 * What the bus logs through: a pino Logger (pass the process's logger, or a child of it) fits.
 * The bus reports here the trouble it cannot throw to a caller (a lost connection, a failing
 * handler), errors under `err`.
 */
export interface BusLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** For a caller that passes no logger: a child of the runtime's default logger. */
export function defaultBusLogger(): BusLogger {
  return defaultLogger().child({ component: 'bus' });
}
