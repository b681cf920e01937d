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
