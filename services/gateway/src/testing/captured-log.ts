import { type Logger, pino } from 'pino';

/** A pino logger whose JSON lines are kept, parsed, for a test to read. */
export function capturedLog(level = 'info'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}
