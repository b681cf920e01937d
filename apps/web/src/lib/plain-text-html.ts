/**
 * Words, digits, spaces and sentence punctuation on one line, starting with a letter: text in
 * which no Markdown construct can start (emphasis, code, links and autolinks, HTML, entities,
 * escapes, lists, headings, quotes, tables, breaks all need a character outside this set, a
 * leading digit, or a second line). `www.` alone would start a GFM autolink; it is checked apart.
 */
const PLAIN = /^\p{L}[\p{L}\p{N} ,.?!:;'"()]*$/u;

/**
 * The HTML that Markdown rendering and sanitizing give `text` when it is plain (see `PLAIN`):
 * one paragraph of the text itself, which needs no escaping. Null for any other text. Plain
 * texts, common in chats, so render without loading or running the Markdown parser.
 */
export function plainTextHtml(text: string): string | null {
  if (text.length > 10_000 || !PLAIN.test(text) || /www\./i.test(text)) return null;
  return `<p>${text}</p>\n`;
}
