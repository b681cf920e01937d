import fc from 'fast-check';
import { Marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { plainTextHtml } from '../src/lib/plain-text-html';

// The app's Markdown options; quotes come back from the sanitizer's serializer unescaped.
const marked = new Marked({ gfm: true, breaks: true, async: false });
const rendered = (text: string) =>
  (marked.parse(text) as string).replaceAll('&#39;', "'").replaceAll('&quot;', '"');

describe('plainTextHtml', () => {
  it('gives the HTML Markdown gives for plain sentences', () => {
    for (const text of [
      'Question 3?',
      'Answer 4: the log keeps every chunk in order.',
      `It's "quoted" (and bracketed), isn't it!`,
      'Ünïcödé wörds; 日本語 too',
    ]) {
      expect(plainTextHtml(text)).toBe(rendered(text));
    }
  });

  it('leaves every text Markdown could change to the parser', () => {
    for (const text of [
      '**bold**',
      'a *b*',
      'snake_case',
      'a `code`',
      '# heading',
      '1. first',
      '2) second',
      '- item',
      '> quote',
      'a | b',
      'see www.example.com',
      'mail me@example.com',
      'http://example.com',
      '<b>x</b>',
      'a &amp; b',
      'two\nlines',
      'back\\slash',
      '[link](x)',
      ' leading space',
      '',
    ]) {
      expect(plainTextHtml(text)).toBeNull();
    }
  });

  it('never differs from Markdown on text it accepts', () => {
    // Mostly the characters of plain text, so that many samples are accepted.
    const character = fc.oneof(
      { arbitrary: fc.constantFrom(...'aZé7 ,.?!:;\'"()w'), weight: 20 },
      { arbitrary: fc.constantFrom(...'*_`#>-+=|[]<>&\\/@~\n\t'), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(character, { maxLength: 40 }), (chars) => {
        const text = chars.join('');
        const html = plainTextHtml(text);
        if (html !== null) expect(html).toBe(rendered(text));
      }),
      { numRuns: 5000 },
    );
  });
});
