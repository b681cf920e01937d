import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import { plainTextHtml } from './plain-text-html';

/** `text` as HTML that shows it as it is: every `<`, `>` and `&` a character, never markup. */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // Raw HTML in the Markdown source is shown as the text it is: `Wrap it in a <section>`
    // keeps its `<section>`, and no tag of it reaches the page.
    html({ text, block }: Tokens.HTML | Tokens.Tag) {
      if (!block) return escapeText(text);
      return `<p>${escapeText(text.replace(/\n+$/, '')).replaceAll('\n', '<br>')}</p>\n`;
    },
    // An image in chunk text would be fetched from wherever it points (a tracking pixel, a
    // request to a local service): it is shown as a link the user may choose to open.
    image({ href, text }) {
      return `<a href="${escapeAttribute(href)}">${escapeText(text || 'image')}</a>`;
    },
  },
  walkTokens(token) {
    // After an inline `<pre>`, `<code>`, `<kbd>` or `<script>` tag the parser hands its text
    // out unescaped, as the raw HTML it would be; here that tag is text, and so is what follows.
    if (token.type === 'text' && 'escaped' in token && token.escaped) token.escaped = false;
  },
});

/**
 * What Markdown makes, and nothing else: no media, frames, forms or styles, and no attribute
 * that makes the browser fetch a URL (`src`, `srcset`, `poster`, `background`, SVG `href`...).
 */
const ALLOWED_TAGS = [
  ...['p', 'br', 'hr', 'blockquote', 'pre', 'code', 'em', 'strong', 'del', 's', 'a'],
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'input'],
  ...['table', 'thead', 'tbody', 'tr', 'th', 'td'],
];
/** Each is checked again per element below: `href` on links, `class` on code, the rest inert. */
const ALLOWED_ATTR = ['href', 'title', 'start', 'align', 'class', 'type', 'checked', 'disabled'];
/** The schemes a link may open; anything else (relative, `javascript:`, `data:`) loses its href. */
const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

function safeLink(href: string): boolean {
  try {
    return LINK_SCHEMES.has(new URL(href).protocol);
  } catch {
    return false;
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href');
    if (href !== null && !safeLink(href)) node.removeAttribute('href');
    // Links open outside the app, never with the opener's window or the app's address.
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  } else {
    node.removeAttribute('href');
  }
  if (node.tagName === 'INPUT') {
    // A task list item's box, which shows and does nothing.
    node.setAttribute('type', 'checkbox');
    node.setAttribute('disabled', '');
  } else {
    for (const name of ['type', 'checked', 'disabled']) node.removeAttribute(name);
  }
  const className = node.getAttribute('class');
  if (className !== null && !(node.tagName === 'CODE' && /^language-[\w#+.-]+$/.test(className))) {
    node.removeAttribute('class');
  }
});

const SANITIZE = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
};

/**
 * Sealed texts render again whenever the window changes (a delta, a page): their HTML is kept,
 * for as many texts as the list shows and a margin, within a budget of characters, so the cache
 * neither outgrows the window nor keeps the texts of chunks the window has let go.
 */
const cache = new Map<string, string>();
const CACHE_SIZE = 200;
const CACHE_CHARS = 2_000_000;
let cachedChars = 0;

/**
 * The HTML of a sealed text chunk: the user's own words exactly as typed (as text; the element
 * showing them keeps their whitespace), everyone else's as Markdown (`renderMarkdown`).
 */
export function renderText(text: string, options: { role: string; sealed: boolean }): string {
  if (options.role === 'user') return escapeText(text);
  return renderMarkdown(text, options);
}

/**
 * Chunk text is untrusted (a model, a tool, another user wrote it): Markdown becomes HTML, with
 * any raw HTML in it shown as text, and that HTML is sanitized against an allowlist of what
 * Markdown makes before it reaches the page (defense in depth: a tag in the source never gets
 * there as a tag).
 */
export function renderMarkdown(text: string, options: { sealed: boolean }): string {
  const plain = plainTextHtml(text);
  if (plain !== null) return plain;
  const cached = cache.get(text);
  if (cached !== undefined) {
    // The least recently shown goes first.
    cache.delete(text);
    cache.set(text, cached);
    return cached;
  }
  const html = DOMPurify.sanitize(marked.parse(text) as string, SANITIZE);
  if (options.sealed) {
    cache.set(text, html);
    cachedChars += text.length + html.length;
    while (cache.size > CACHE_SIZE || (cachedChars > CACHE_CHARS && cache.size > 1)) {
      const [oldText, oldHtml] = cache.entries().next().value as [string, string];
      cache.delete(oldText);
      cachedChars -= oldText.length + oldHtml.length;
    }
  }
  return html;
}

/**
 * A tail longer than this is shown as plain text until the block seals: re-parsing it on every
 * frame would make each token cost as much as the whole paragraph typed so far.
 */
const TAIL_MARKDOWN_LIMIT = 2000;
/** Plain text is handed out in pieces this long, so a new token changes the last piece alone. */
const PIECE = 1024;

/**
 * What a block still streaming shows: the HTML of its finished paragraphs, each rendered once as
 * it ends, and the paragraph being typed, as Markdown while it is short and as plain text pieces
 * once it is long. Each frame costs the new text and the last paragraph at most, however long
 * the block already is. (A paragraph ends at a blank line outside a code fence; the sealed block
 * is rendered whole, so the screen ends up equal to the stored text.)
 */
export type StreamingParts = {
  /** HTML of the finished paragraphs, in groups; a group never changes once handed out. */
  head: readonly string[];
  /** HTML of the paragraph being typed, or null when it is shown as `plain`. */
  tail: string | null;
  /** The paragraph being typed as plain text, in pieces of which only the last one grows. */
  plain: readonly string[];
};

/** What was read of an open block so far, so the next frame reads only the text added since. */
type Progress = {
  /** Characters read; `check` is the text just before that point, to notice a different text. */
  read: number;
  check: string;
  /** Code fences seen (odd: inside one), backticks in the current run, newlines in the current whitespace run. */
  fences: number;
  backticks: number;
  newlines: number;
  /** End of the last finished paragraph, and the HTML of the text before it. */
  cut: number;
  head: string[];
};

const progress = new Map<string, Progress>();
const OPEN_BLOCKS = 8;

function progressOf(id: string, text: string): Progress {
  const known = progress.get(id);
  if (
    known !== undefined &&
    text.length >= known.read &&
    text.startsWith(known.check, known.read - known.check.length)
  ) {
    return known;
  }
  if (known === undefined && progress.size >= OPEN_BLOCKS) {
    progress.delete(progress.keys().next().value as string);
  }
  const fresh: Progress = {
    read: 0,
    check: '',
    fences: 0,
    backticks: 0,
    newlines: 0,
    cut: 0,
    head: [],
  };
  progress.set(id, fresh);
  return fresh;
}

/** Reads the text added since the last frame: fences (```) and blank lines outside them. */
function readOn(state: Progress, text: string): number {
  let cut = state.cut;
  for (let index = state.read; index < text.length; index += 1) {
    const char = text[index]!;
    if (char === '`') {
      state.newlines = 0;
      state.backticks += 1;
      if (state.backticks === 3) {
        state.fences += 1;
        state.backticks = 0;
      }
      continue;
    }
    state.backticks = 0;
    if (char === '\n') {
      state.newlines += 1;
      if (state.newlines >= 2 && state.fences % 2 === 0) cut = index + 1;
    } else if (!/\s/.test(char)) {
      state.newlines = 0;
    }
  }
  state.read = text.length;
  state.check = text.slice(Math.max(0, text.length - 64));
  return cut;
}

/** The open block `id` with its text so far, as its parts (see `StreamingParts`). */
export function renderStreaming(id: string, text: string): StreamingParts {
  const state = progressOf(id, text);
  const cut = readOn(state, text);
  if (cut > state.cut) {
    state.head = [...state.head, renderMarkdown(text.slice(state.cut, cut), { sealed: false })];
    state.cut = cut;
  }
  const tail = text.slice(state.cut);
  if (tail.length <= TAIL_MARKDOWN_LIMIT) {
    return { head: state.head, tail: renderMarkdown(tail, { sealed: false }), plain: [] };
  }
  const plain: string[] = [];
  for (let start = 0; start < tail.length; start += PIECE) {
    plain.push(tail.slice(start, start + PIECE));
  }
  return { head: state.head, tail: null, plain };
}
