import { z } from 'zod';
import { evaluateArithmetic } from './evaluate-arithmetic';
import { defineTool, type ToolDefinition } from './tool-registry';

/** The current time, so the model need not guess it. */
export const getTimeTool = defineTool({
  name: 'get_time',
  description:
    'Returns the current date and time as ISO 8601 (UTC) and, when a time zone is given, as local wall-clock time there.',
  inputSchema: z.object({
    timeZone: z.string().min(1).max(64).optional().describe('IANA time zone, e.g. Europe/Paris'),
  }),
  async run({ timeZone }) {
    const now = new Date();
    if (!timeZone) return { iso: now.toISOString() };
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      dateStyle: 'full',
      timeStyle: 'long',
    }).format(now);
    return { iso: now.toISOString(), timeZone, local };
  },
});

/** Exact arithmetic, which models get wrong on their own. */
export const calculatorTool = defineTool({
  name: 'calculator',
  description:
    'Evaluates an arithmetic expression with + - * / % ^, parentheses and sqrt, abs, floor, ceil, round, ln, log10, pi, e. Returns the number.',
  inputSchema: z.object({ expression: z.string().min(1).max(1000) }),
  async run({ expression }) {
    return { value: evaluateArithmetic(expression) };
  },
});

/** Waits, then answers: lets an agent pace itself (and lets tests hold a turn mid-tool). */
export const sleepTool = defineTool({
  name: 'sleep',
  description: 'Waits the given number of milliseconds (at most 60000), then returns.',
  inputSchema: z.object({ milliseconds: z.number().int().min(0).max(60_000) }),
  run({ milliseconds }, { signal }) {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(new Error('cancelled'));
        return;
      }
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve({ sleptMilliseconds: milliseconds });
      }, milliseconds);
      const onAbort = () => {
        clearTimeout(timer);
        reject(new Error('cancelled'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  },
});

/** The built-in tools every worker offers unless configured otherwise. */
export function builtinTools(): ToolDefinition<unknown>[] {
  return [getTimeTool, calculatorTool, sleepTool] as ToolDefinition<unknown>[];
}
