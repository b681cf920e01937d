import { InvalidInputError } from '@chunklog/chunk-core';

// NATS forbids whitespace in subjects; empty tokens ("a..b", ".a", "a.") are invalid too.
const invalidTokenCharacters = /[\s]/;

/**
 * Checks a subject (wildcards: false) or a subscription pattern (wildcards: true) the way a
 * NATS server would, so the in-process bus refuses exactly what NATS refuses.
 */
export function assertValidSubject(subject: string, options: { wildcards: boolean }): void {
  const tokens = subject.split('.');
  tokens.forEach((token, index) => {
    if (token.length === 0 || invalidTokenCharacters.test(token)) {
      throw new InvalidInputError(`invalid subject "${subject}"`);
    }
    const isWildcard = token === '*' || token === '>';
    if (isWildcard && !options.wildcards) {
      throw new InvalidInputError(`wildcards are not allowed in subject "${subject}"`);
    }
    if (token === '>' && index !== tokens.length - 1) {
      throw new InvalidInputError(`'>' must be the last token of "${subject}"`);
    }
  });
}

/** NATS subject matching: '*' matches exactly one token, a final '>' matches one or more. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const patternTokens = pattern.split('.');
  const subjectTokens = subject.split('.');
  for (let index = 0; index < patternTokens.length; index++) {
    const patternToken = patternTokens[index];
    if (patternToken === '>') return subjectTokens.length > index;
    const subjectToken = subjectTokens[index];
    if (subjectToken === undefined) return false;
    if (patternToken !== '*' && patternToken !== subjectToken) return false;
  }
  return patternTokens.length === subjectTokens.length;
}
