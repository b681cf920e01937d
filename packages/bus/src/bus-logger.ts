/** Where an adapter reports trouble it cannot throw to a caller (pino-compatible: details first). */
export interface BusLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** The default logger: the console, with the details after the message. */
export const consoleBusLogger: BusLogger = {
  info: (details, message) => console.info(`[bus] ${message}`, details),
  warn: (details, message) => console.warn(`[bus] ${message}`, details),
  error: (details, message) => console.error(`[bus] ${message}`, details),
};
