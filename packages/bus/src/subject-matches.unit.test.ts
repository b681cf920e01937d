import { InvalidInputError } from '@chunklog/chunk-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertValidSubject, subjectMatches } from './subject-matches';

const token = fc.constantFrom('chunklog', 'tab', 'evt', 'cmd', 'a', 'b', 'chunk-seal');
const subject = fc.array(token, { minLength: 1, maxLength: 6 });

describe('subjectMatches', () => {
  it('matches a subject against itself with any tokens replaced by *', () => {
    fc.assert(
      fc.property(
        subject,
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        (tokens, mask) => {
          const pattern = tokens.map((part, index) => (mask[index] ? '*' : part)).join('.');
          expect(subjectMatches(pattern, tokens.join('.'))).toBe(true);
        },
      ),
    );
  });

  it('matches a final > to one or more remaining tokens, never to none', () => {
    fc.assert(
      fc.property(subject, fc.nat(6), (tokens, keep) => {
        const kept = tokens.slice(0, keep);
        const pattern = [...kept, '>'].join('.');
        expect(subjectMatches(pattern, tokens.join('.'))).toBe(tokens.length > kept.length);
      }),
    );
  });

  it('never matches when token counts differ and there is no >', () => {
    fc.assert(
      fc.property(subject, subject, (patternTokens, subjectTokens) => {
        fc.pre(patternTokens.length !== subjectTokens.length);
        const pattern = patternTokens.map(() => '*').join('.');
        expect(subjectMatches(pattern, subjectTokens.join('.'))).toBe(false);
      }),
    );
  });

  it('never matches when one literal token differs', () => {
    fc.assert(
      fc.property(subject, fc.nat(5), (tokens, position) => {
        const index = position % tokens.length;
        const changed = tokens.map((part, at) => (at === index ? `${part}x` : part));
        expect(subjectMatches(changed.join('.'), tokens.join('.'))).toBe(false);
      }),
    );
  });
});

describe('assertValidSubject', () => {
  it('refuses empty tokens, whitespace, and wildcards where they do not belong', () => {
    for (const bad of ['', 'a..b', '.a', 'a.', 'a b', 'a.>.b']) {
      expect(() => assertValidSubject(bad, { wildcards: true }), bad).toThrow(InvalidInputError);
    }
    expect(() => assertValidSubject('a.*', { wildcards: false })).toThrow(InvalidInputError);
    expect(() => assertValidSubject('a.*.>', { wildcards: true })).not.toThrow();
  });
});
