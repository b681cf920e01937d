import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  // An image in chunk text would be fetched from wherever it points (a tracking pixel, a
  // request to a local service): it is shown as a link the user may choose to open.
  renderer: {
    image({ href, text }) {
      return `<a href="${escapeAttribute(href)}">${escapeText(text || 'image')}</a>`;
    },
  },
});

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}

// Links open outside the app, never with the opener's window.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Sealed texts render again whenever the window changes (a delta, a page): their HTML is kept. */
const cache = new Map<string, string>();
const CACHE_SIZE = 1000;

/**
 * Chunk text is untrusted (a model, a tool, another user wrote it): Markdown becomes HTML, and
 * that HTML is sanitized before it reaches the page, so `<script>`, event handlers and
 * `javascript:` links in it are dropped rather than run.
 */
export function renderMarkdown(text: string, options: { sealed: boolean }): string {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const html = DOMPurify.sanitize(marked.parse(text) as string, {
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'img'],
    FORBID_ATTR: ['style'],
  });
  if (options.sealed) {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(text, html);
  }
  return html;
}

/** The last few heads of open blocks, by text: each changes only when a paragraph ends. */
const heads = new Map<string, string>();

/**
 * A block still streaming, as the HTML of its finished paragraphs and of the paragraph being
 * typed: the first changes only when a paragraph ends, so each token parses, sanitizes and lays
 * out the last paragraph alone. (Split at the last blank line outside a code fence; the sealed
 * block is rendered whole.)
 */
export function renderStreaming(text: string): { head: string; tail: string } {
  let cut = 0;
  let fences = 0;
  const pattern = /```|\n\s*\n/g;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0] === '```') fences += 1;
    else if (fences % 2 === 0) cut = match.index + match[0].length;
  }
  const headText = text.slice(0, cut);
  let head = heads.get(headText);
  if (head === undefined) {
    head = headText === '' ? '' : renderMarkdown(headText, { sealed: false });
    if (heads.size >= 4) heads.delete(heads.keys().next().value as string);
    heads.set(headText, head);
  }
  return { head, tail: renderMarkdown(text.slice(cut), { sealed: false }) };
}
