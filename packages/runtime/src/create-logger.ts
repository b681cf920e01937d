import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { LogLevel } from './log-level';
import { traceLogFields } from './tracing/trace-log-fields';

export interface LoggerSettings {
  /**
   * The service the lines come from (`gateway`, `agent-worker`, ...), bound as `service`.
   * A process that hosts several services leaves it out and binds one per child instead.
   */
  service?: string;
  level?: LogLevel;
}

/**
 * The pino options every chunklog logger is built with: JSON lines, ISO time, the level as its
 * name, errors (under `err` or `error`) with their stack and cause chain, and on a line written
 * inside a span the span's `trace_id` and `span_id` (docs/architecture.md, "Tracing").
 */
function loggerOptions(settings: LoggerSettings): LoggerOptions {
  return {
    level: settings.level ?? 'info',
    base: settings.service === undefined ? {} : { service: settings.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    mixin: traceLogFields,
  };
}

/**
 * Where logs go: stdout, written synchronously, so lines keep their order and none is lost when
 * the process exits right after logging (a shutdown, a failed start). chunklog logs per request
 * and per turn, not per token, so blocking writes cost little.
 */
function logDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

/** The process's logger: JSON lines on `logDestination()` (or on `destination`, for tests). */
export function createLogger(settings: LoggerSettings, destination?: DestinationStream): Logger {
  return pino(loggerOptions(settings), destination ?? logDestination());
}

let shared: Logger | undefined;

/**
 * The logger of code that was given none (a bus built without one, say): made once per process,
 * on first use, with the defaults above, so such code never opens a destination of its own.
 */
export function defaultLogger(): Logger {
  shared ??= createLogger({});
  return shared;
}
