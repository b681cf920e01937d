import { z } from 'zod';

export const LogLevelSchema = z.enum(['debug', 'info', 'warn', 'error', 'silent']);
export type LogLevel = z.infer<typeof LogLevelSchema>;

/** Structured logging the worker writes through; any pino-like logger fits. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const ranks: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** A JSON-lines logger on stderr, dropping lines below `level`. */
export function createLogger(level: LogLevel, base: Record<string, unknown> = {}): Logger {
  const write = (lineLevel: Exclude<LogLevel, 'silent'>) => {
    return (message: string, fields?: Record<string, unknown>) => {
      if (ranks[lineLevel] < ranks[level]) return;
      const line = {
        time: new Date().toISOString(),
        level: lineLevel,
        message,
        ...base,
        ...fields,
      };
      process.stderr.write(`${JSON.stringify(line, errorReplacer)}\n`);
    };
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
