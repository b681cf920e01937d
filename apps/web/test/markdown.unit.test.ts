// @vitest-environment jsdom
/**
 * What the app renders of untrusted text, in a DOM (DOMPurify needs one): the user's own words
 * exactly as typed, Markdown with its raw HTML as text, and nothing in a message that points the
 * browser at a URL except a link with a safe scheme.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown, renderText } from '../src/lib/markdown';

/** The element the app puts the HTML in, as the browser builds it. */
function shown(html: string): HTMLElement {
  const element = document.createElement('div');
  element.innerHTML = html;
  return element;
}

/** Every element and attribute of `html`, e.g. `a[href=https://x]`. */
function markup(html: string): string[] {
  return [...shown(html).querySelectorAll('*')].map(
    (element) =>
      element.localName +
      [...element.attributes].map((attribute) => `[${attribute.name}=${attribute.value}]`).join(''),
  );
}

/** Attributes that make a browser fetch (or navigate to) a URL. */
const URL_ATTRIBUTES = [
  'src',
  'srcset',
  'poster',
  'href',
  'xlink:href',
  'background',
  'data',
  'action',
  'formaction',
  'style',
];

const MEDIA = [
  '<video src="http://127.0.0.1:9/v" poster="http://127.0.0.1:9/p"></video>',
  '<audio src="http://127.0.0.1:9/a" controls></audio>',
  '<picture><source srcset="http://127.0.0.1:9/s"></picture>',
  '<video><source src="http://127.0.0.1:9/s2"></video>',
  '<svg><image href="http://127.0.0.1:9/i" /></svg>',
  '<svg><image xlink:href="http://127.0.0.1:9/x" /></svg>',
  '<table background="http://127.0.0.1:9/t"><tr><td>cell</td></tr></table>',
  '<img src="http://127.0.0.1:9/img">',
  '![alt](http://127.0.0.1:9/md-image)',
  '<iframe src="http://127.0.0.1:9/f"></iframe>',
  '<object data="http://127.0.0.1:9/o"></object>',
  '<link rel="stylesheet" href="http://127.0.0.1:9/l">',
  '<p style="background:url(http://127.0.0.1:9/css)">styled</p>',
  '<input type="image" src="http://127.0.0.1:9/in">',
  '<body background="http://127.0.0.1:9/b">',
];

describe("the user's own text", () => {
  it('comes out exactly as typed, as text', () => {
    for (const text of [
      'How do I center a <div> in CSS? Is 6*7 bigger than 2*3?',
      'snake_case and __dunder__ and `ticks` and ``` fences',
      '<script>window.__pwned = 1</script> & &amp; &lt;b&gt;',
      '  indented\n\n\ttabbed\nlast line  ',
      '# not a heading\n- not a list\n> not a quote\n[not](a link) ![nor](an image)',
    ]) {
      const element = shown(renderText(text, { role: 'user', sealed: true }));
      expect(element.textContent).toBe(text);
      expect(element.children).toHaveLength(0);
    }
  });
});

describe('assistant Markdown', () => {
  it('shows raw HTML as text, inline and in blocks', () => {
    const inline = shown(
      renderText('Wrap it in a <section> element', { role: 'assistant', sealed: true }),
    );
    expect(inline.textContent?.trim()).toBe('Wrap it in a <section> element');
    expect(inline.querySelector('section')).toBeNull();

    const block = shown(renderMarkdown('<section>\nhello\n</section>', { sealed: true }));
    expect(block.textContent).toContain('<section>');
    expect(block.textContent).toContain('</section>');
    expect(block.querySelector('section')).toBeNull();

    const script = shown(renderMarkdown('a <script>alert(1)</script> b', { sealed: true }));
    expect(script.textContent?.trim()).toBe('a <script>alert(1)</script> b');
    expect(script.querySelector('script')).toBeNull();

    // After an inline `<code>` tag the parser would pass its text on raw: it stays text.
    const raw = shown(renderMarkdown('x <code><b>bold</b></code> y', { sealed: true }));
    expect(raw.textContent?.trim()).toBe('x <code><b>bold</b></code> y');
    expect(raw.querySelector('b, code')).toBeNull();
  });

  it('still renders the Markdown around it', () => {
    const html = renderMarkdown(
      [
        '# Title',
        '**bold** *em* ~~gone~~ `code` [link](https://example.com "t")',
        '1. one\n2. two',
        '- [x] done\n- [ ] todo',
        '> quoted',
        '| a | b |\n|:-|-:|\n| 1 | 2 |',
        '```js\nconst a = 1 < 2;\n```',
        '---',
      ].join('\n\n'),
      { sealed: true },
    );
    expect(markup(html)).toEqual([
      'h1',
      'p',
      'strong',
      'em',
      'del',
      'code',
      'a[href=https://example.com][title=t][target=_blank][rel=noopener noreferrer nofollow]',
      'ol',
      'li',
      'li',
      'ul',
      'li',
      'input[checked=][disabled=][type=checkbox]',
      'li',
      'input[disabled=][type=checkbox]',
      'blockquote',
      'p',
      'table',
      'thead',
      'tr',
      'th[align=left]',
      'th[align=right]',
      'tbody',
      'tr',
      'td[align=left]',
      'td[align=right]',
      'pre',
      'code[class=language-js]',
      'hr',
    ]);
    expect(shown(html).querySelector('pre')?.textContent).toBe('const a = 1 < 2;\n');
  });

  it('keeps no attribute that fetches a URL, shows the markup as text, and links only safe schemes', () => {
    for (const payload of MEDIA) {
      const html = renderMarkdown(`Look: ${payload} done`, { sealed: true });
      for (const element of shown(html).querySelectorAll('*')) {
        for (const name of URL_ATTRIBUTES) {
          if (name === 'href' && element.localName === 'a') continue;
          expect(element.hasAttribute(name), `${element.localName}[${name}] from ${payload}`).toBe(
            false,
          );
        }
      }
      expect(
        markup(html).filter((tag) => !/^(p|a|br)\b/.test(tag)),
        payload,
      ).toEqual([]);
      if (payload.startsWith('<')) expect(shown(html).textContent).toContain(payload.slice(0, 6));
    }

    const links = renderMarkdown(
      [
        '[a](https://example.com/a) [b](http://example.com/b) [c](mailto:me@example.com)',
        '[d](javascript:alert(1)) [e](data:text/html,x) [f](/v1/tabs) [g](#/tabs/x) [h](vbscript:x)',
        '![pixel](https://example.com/pixel.png)',
      ].join('\n\n'),
      { sealed: true },
    );
    expect(
      [...shown(links).querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href')]),
    ).toEqual([
      ['a', 'https://example.com/a'],
      ['b', 'http://example.com/b'],
      ['c', 'mailto:me@example.com'],
      ['d', null],
      ['e', null],
      ['f', null],
      ['g', null],
      ['h', null],
      ['pixel', 'https://example.com/pixel.png'],
    ]);
  });
});
