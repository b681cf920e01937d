import type { Logger } from 'pino';

/** The signals a service stops on: Ctrl-C, and what `docker stop` and process managers send. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** What the lifecycle needs of its process; tests pass a stand-in. */
export interface SignalProcess {
  on(signal: StopSignal, listener: () => void): unknown;
  exit(code: number): void;
}

export interface RunUntilSignalOptions {
  logger: Logger;
  /** Closes what the main opened, in reverse order of opening. */
  stop: () => Promise<void>;
  /** How long `stop` may take before the process exits anyway (exit code 1). */
  timeoutMs?: number;
  host?: SignalProcess;
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * Keeps the service running until SIGINT or SIGTERM, then stops it once: exit code 0 when
 * `stop` finishes, 1 when it fails or outlasts the timeout (a stuck client or a hung turn
 * cannot hold the process). A second signal during the shutdown changes nothing.
 * Resolves with the signal once the shutdown has begun.
 */
export function runUntilSignal(options: RunUntilSignalOptions): Promise<StopSignal> {
  const host = options.host ?? process;
  const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  const { logger } = options;
  let stopping = false;

  async function shutDown(signal: StopSignal): Promise<void> {
    logger.info({ signal, timeoutMs }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, 'shutdown timed out');
      host.exit(1);
    }, timeoutMs);
    timer.unref();
    try {
      await options.stop();
      logger.info('stopped');
      host.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      host.exit(1);
    } finally {
      clearTimeout(timer);
    }
  }

  return new Promise((resolve) => {
    for (const signal of STOP_SIGNALS) {
      // Listening for good: a second signal is swallowed, not Node's default of dying at once.
      host.on(signal, () => {
        if (stopping) {
          logger.warn({ signal }, 'already shutting down');
          return;
        }
        stopping = true;
        resolve(signal);
        void shutDown(signal);
      });
    }
  });
}
