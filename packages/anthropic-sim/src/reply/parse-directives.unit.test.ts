import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDirectives } from './parse-directives';

describe('parseDirectives', () => {
  it('reads every directive kind with its arguments and options', () => {
    const parsed = parseDirectives(
      [
        'Plan a trip',
        '[[sim: think "Where to, \\"exactly\\"?"]]',
        '[[sim: words 50]]',
        '[[sim: text "Done."]]',
        '[[sim: tool search {"query":"a ]] b","filters":[[1,2]]}]]',
        '[[sim: tool clock]]',
        '[[sim: steps 3]]',
        '[[sim: stop max_tokens]]',
        '[[sim: error 429 retry-after=1 times=2]]',
        '[[sim: stream-error overloaded_error after=3 step=1]]',
        '[[sim: delay 200]]',
        '[[sim: rate 50]]',
      ].join(' '),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.text).toBe('Plan a trip');
    expect(parsed.directives).toEqual([
      { kind: 'think', text: 'Where to, "exactly"?' },
      { kind: 'words', count: 50 },
      { kind: 'text', text: 'Done.' },
      { kind: 'tool', name: 'search', input: { query: 'a ]] b', filters: [[1, 2]] } },
      { kind: 'tool', name: 'clock', input: {} },
      { kind: 'steps', count: 3 },
      { kind: 'stop', reason: 'max_tokens' },
      {
        kind: 'error',
        status: 429,
        retryAfterSeconds: 1,
        times: 2,
        step: 0,
        source: '[[sim: error 429 retry-after=1 times=2]]',
      },
      {
        kind: 'stream-error',
        errorType: 'overloaded_error',
        afterDeltas: 3,
        step: 1,
        source: '[[sim: stream-error overloaded_error after=3 step=1]]',
      },
      { kind: 'delay', milliseconds: 200 },
      { kind: 'rate', tokensPerSecond: 50 },
    ]);
  });

  it.each([
    ['[[sim: dance]]', 'unknown directive'],
    ['[[sim: words lots]]', 'whole number'],
    ['[[sim: stop whenever]]', 'stop expects'],
    ['[[sim: tool search [1]]]', 'JSON object'],
    ['[[sim: tool search {"a":]]', 'unterminated'],
    ['[[sim: error 200]]', 'HTTP status'],
    ['[[sim: error 429 times=x]]', 'options'],
    ['[[sim: think unquoted]]', 'quoted string'],
  ])('rejects %s', (text, reason) => {
    const parsed = parseDirectives(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain(reason);
  });

  it('leaves text without directives alone, apart from whitespace', () => {
    fc.assert(
      fc.property(
        fc.string().filter((text) => !text.includes('[[sim:')),
        (text) => {
          const parsed = parseDirectives(text);
          expect(parsed).toEqual({
            ok: true,
            directives: [],
            text: text.replace(/\s+/g, ' ').trim(),
          });
        },
      ),
    );
  });

  it('round-trips any JSON object as a tool input', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
        fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/),
        (input, name) => {
          const parsed = parseDirectives(
            `before [[sim: tool ${name} ${JSON.stringify(input)}]] after`,
          );
          expect(parsed).toEqual({
            ok: true,
            directives: [{ kind: 'tool', name, input: JSON.parse(JSON.stringify(input)) }],
            text: 'before after',
          });
        },
      ),
    );
  });
});
