import { z } from 'zod';
import { type ApiErrorType, ApiErrorTypeSchema } from './api-error-type';

/** Stop reasons the Messages API reports. */
export const StopReasonSchema = z.enum([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
  'compaction',
]);
export type StopReason = z.infer<typeof StopReasonSchema>;

/** One `[[sim: ...]]` instruction found in the user's text. */
export type Directive =
  | { kind: 'think'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'words'; count: number }
  | { kind: 'tool'; name: string; input: Record<string, unknown> }
  | { kind: 'steps'; count: number }
  | { kind: 'stop'; reason: StopReason }
  | {
      kind: 'error';
      status: number;
      retryAfterSeconds?: number;
      times?: number;
      step: number;
      source: string;
    }
  | {
      kind: 'stream-error';
      errorType: ApiErrorType;
      afterDeltas: number;
      times?: number;
      step: number;
      source: string;
    }
  | { kind: 'delay'; milliseconds: number }
  | { kind: 'rate'; tokensPerSecond: number }
  | { kind: 'context-window'; tokens: number }
  | { kind: 'compaction-unavailable'; times?: number; source: string };

/** The result of scanning a text: its directives, or the first malformed one. */
export type ParsedDirectives =
  | { ok: true; directives: Directive[]; text: string }
  | { ok: false; message: string };

const opening = '[[sim:';

/**
 * Finds every `[[sim: name args...]]` in `text` and returns them in order, together with the
 * text with the directives removed. Arguments are bare words, numbers, `"quoted strings"`,
 * `key=value` options and one JSON object (for tool inputs), so the scanner tracks quotes and
 * braces to find the closing `]]`.
 */
export function parseDirectives(text: string): ParsedDirectives {
  const directives: Directive[] = [];
  let remaining = '';
  let position = 0;
  while (true) {
    const start = text.indexOf(opening, position);
    if (start === -1) break;
    remaining += text.slice(position, start);
    const end = findClosing(text, start + opening.length);
    if (end === -1) return { ok: false, message: `unterminated directive at ${start}` };
    const source = text.slice(start, end + 2);
    const parsed = parseOne(text.slice(start + opening.length, end).trim(), source);
    if (typeof parsed === 'string') return { ok: false, message: `${source}: ${parsed}` };
    directives.push(parsed);
    position = end + 2;
  }
  remaining += text.slice(position);
  return { ok: true, directives, text: remaining.replace(/\s+/g, ' ').trim() };
}

function findClosing(text: string, from: number): number {
  let depth = 0;
  let quoted = false;
  for (let index = from; index < text.length; index += 1) {
    const character = text[index];
    if (quoted) {
      if (character === '\\') index += 1;
      else if (character === '"') quoted = false;
      continue;
    }
    if (character === '"') quoted = true;
    else if (character === '{' || character === '[') depth += 1;
    else if ((character === '}' || character === ']') && depth > 0) depth -= 1;
    else if (character === ']' && text[index + 1] === ']') return index;
  }
  return -1;
}

type Argument =
  | { kind: 'word'; value: string }
  | { kind: 'string'; value: string }
  | { kind: 'json'; value: Record<string, unknown> }
  | { kind: 'option'; key: string; value: string };

function tokenize(body: string): Argument[] | string {
  const argumentsFound: Argument[] = [];
  let index = 0;
  while (index < body.length) {
    const character = body[index];
    if (character === undefined) break;
    if (/\s/.test(character)) {
      index += 1;
      continue;
    }
    if (character === '"') {
      const end = findStringEnd(body, index);
      if (end === -1) return 'unterminated string';
      argumentsFound.push({ kind: 'string', value: JSON.parse(body.slice(index, end + 1)) });
      index = end + 1;
      continue;
    }
    if (character === '{') {
      const end = findObjectEnd(body, index);
      if (end === -1) return 'unterminated JSON object';
      try {
        const value = JSON.parse(body.slice(index, end + 1));
        argumentsFound.push({ kind: 'json', value });
      } catch (error) {
        return `invalid JSON: ${(error as Error).message}`;
      }
      index = end + 1;
      continue;
    }
    let end = index;
    while (end < body.length && !/\s/.test(body[end] ?? ' ')) end += 1;
    const word = body.slice(index, end);
    const equals = word.indexOf('=');
    argumentsFound.push(
      equals > 0
        ? { kind: 'option', key: word.slice(0, equals), value: word.slice(equals + 1) }
        : { kind: 'word', value: word },
    );
    index = end;
  }
  return argumentsFound;
}

function findStringEnd(body: string, start: number): number {
  for (let index = start + 1; index < body.length; index += 1) {
    if (body[index] === '\\') index += 1;
    else if (body[index] === '"') return index;
  }
  return -1;
}

function findObjectEnd(body: string, start: number): number {
  let depth = 0;
  for (let index = start; index < body.length; index += 1) {
    const character = body[index];
    if (character === '"') {
      index = findStringEnd(body, index);
      if (index === -1) return -1;
    } else if (character === '{') depth += 1;
    else if (character === '}') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

const count = z.coerce.number().int().min(0);
const positive = z.coerce.number().positive();

function parseOne(body: string, source: string): Directive | string {
  const tokens = tokenize(body);
  if (typeof tokens === 'string') return tokens;
  const [head, ...rest] = tokens;
  if (head?.kind !== 'word') return 'expected a directive name';
  const positional = rest.filter((token) => token.kind !== 'option');
  const options = new Map(
    rest.flatMap((token) => (token.kind === 'option' ? [[token.key, token.value] as const] : [])),
  );
  const first = positional[0];
  const firstText = first && first.kind !== 'json' ? first.value : undefined;
  const numberOption = (key: string, schema: z.ZodType<number>) => {
    const raw = options.get(key);
    if (raw === undefined) return undefined;
    const parsed = schema.safeParse(raw);
    return parsed.success ? parsed.data : Number.NaN;
  };

  switch (head.value) {
    case 'think':
    case 'text': {
      if (first?.kind !== 'string') return `${head.value} expects a "quoted string"`;
      return { kind: head.value, text: first.value };
    }
    case 'words':
    case 'steps': {
      const parsed = count.min(1).safeParse(firstText);
      if (!parsed.success) return `${head.value} expects a whole number of at least 1`;
      return { kind: head.value, count: parsed.data };
    }
    case 'tool': {
      if (first?.kind !== 'word') return 'tool expects a tool name';
      const input = positional[1];
      if (input !== undefined && input.kind !== 'json') return 'tool input must be a JSON object';
      return { kind: 'tool', name: first.value, input: input?.value ?? {} };
    }
    case 'stop': {
      const parsed = StopReasonSchema.safeParse(firstText);
      if (!parsed.success) return `stop expects one of ${StopReasonSchema.options.join(', ')}`;
      return { kind: 'stop', reason: parsed.data };
    }
    case 'error': {
      const status = z.coerce.number().int().min(400).max(599).safeParse(firstText);
      if (!status.success) return 'error expects an HTTP status between 400 and 599';
      const retryAfterSeconds = numberOption('retry-after', z.coerce.number().min(0));
      const times = numberOption('times', count);
      const step = numberOption('step', count) ?? 0;
      if ([retryAfterSeconds, times, step].some((value) => Number.isNaN(value))) {
        return 'error options are retry-after=<seconds> times=<n> step=<n>';
      }
      return {
        kind: 'error',
        status: status.data,
        step,
        source,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
        ...(times === undefined ? {} : { times }),
      };
    }
    case 'stream-error': {
      const errorType = ApiErrorTypeSchema.safeParse(firstText ?? 'overloaded_error');
      if (!errorType.success) return `stream-error expects one of ${ApiErrorTypeSchema.options}`;
      const afterDeltas = numberOption('after', count) ?? 0;
      const times = numberOption('times', count);
      const step = numberOption('step', count) ?? 0;
      if ([afterDeltas, times, step].some((value) => Number.isNaN(value))) {
        return 'stream-error options are after=<deltas> times=<n> step=<n>';
      }
      return {
        kind: 'stream-error',
        errorType: errorType.data,
        afterDeltas,
        step,
        source,
        ...(times === undefined ? {} : { times }),
      };
    }
    case 'delay': {
      const parsed = count.safeParse(firstText);
      if (!parsed.success) return 'delay expects milliseconds';
      return { kind: 'delay', milliseconds: parsed.data };
    }
    case 'rate': {
      const parsed = positive.safeParse(firstText);
      if (!parsed.success) return 'rate expects tokens per second';
      return { kind: 'rate', tokensPerSecond: parsed.data };
    }
    case 'context-window': {
      const parsed = count.min(1).safeParse(firstText);
      if (!parsed.success) return 'context-window expects a whole number of tokens';
      return { kind: 'context-window', tokens: parsed.data };
    }
    case 'compaction-unavailable': {
      const times = numberOption('times', count);
      if (Number.isNaN(times)) return 'compaction-unavailable options are times=<n>';
      return { kind: 'compaction-unavailable', source, ...(times === undefined ? {} : { times }) };
    }
    default:
      return `unknown directive "${head.value}"`;
  }
}
