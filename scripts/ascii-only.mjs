/**
 * Bundles written in ASCII only. esbuild escapes non-ASCII characters in strings, templates and
 * identifiers, but keeps the comments it carries over (JSDoc of bundled dependencies, an em dash
 * here and there) and the text of regular expression literals. One such character is enough
 * for Node to decode the whole file to a two-byte string, which V8 then scans, hashes against
 * its compile cache and keeps at twice the size: on the all-in-one's start, decoding and compiling
 * its chunks took about 190 ms of the main thread's time, against about 50 ms in ASCII.
 *
 * Here every non-ASCII character in a comment or a regular expression literal becomes a \u
 * escape: in a comment it is only text, and in a regular expression it matches what the
 * character matched (with or without the u flag). Characters anywhere else are left as they are
 * (esbuild leaves none there today); the file then keeps its two-byte cost, and the build says so.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'acorn';

const nonAscii = /[\u0080-\uffff]/;

/** `character` (one code point) as \u escapes of its UTF-16 code units. */
function unicodeEscape(character) {
  let escaped = '';
  for (let index = 0; index < character.length; index += 1) {
    escaped += `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`;
  }
  return escaped;
}

/** True when the character at `index` follows an odd run of backslashes (it is escaped). */
function escapedAt(source, index) {
  let backslashes = 0;
  while (index - backslashes - 1 >= 0 && source[index - backslashes - 1] === '\\') backslashes += 1;
  return backslashes % 2 === 1;
}

/**
 * `source` (an ES module) with the non-ASCII characters of its comments and regular expression
 * literals escaped; `left` counts those it left elsewhere.
 */
export function asciiOnly(source) {
  if (!nonAscii.test(source)) return { source, left: 0 };
  const ranges = [];
  parse(source, {
    ecmaVersion: 'latest',
    sourceType: 'module',
    onComment: (_block, _text, start, end) => ranges.push({ start, end, regex: false }),
    onToken: (token) => {
      if (token.type.label === 'regexp')
        ranges.push({ start: token.start, end: token.end, regex: true });
    },
  });
  ranges.sort((a, b) => a.start - b.start);
  let result = '';
  let done = 0;
  for (const { start, end, regex } of ranges) {
    const text = source.slice(start, end);
    if (!nonAscii.test(text)) continue;
    result += source.slice(done, start);
    let offset = 0;
    for (const character of text) {
      // `\é` in a regular expression is é itself; its escape would need the backslash gone.
      const keep = character.charCodeAt(0) < 0x80 || (regex && escapedAt(text, offset));
      result += keep ? character : unicodeEscape(character);
      offset += character.length;
    }
    done = end;
  }
  result += source.slice(done);
  let left = 0;
  for (const character of result) if (character.charCodeAt(0) >= 0x80) left += 1;
  return { source: result, left };
}

/** Rewrites every .js file under `folder` in ASCII where it can; returns the files it could not. */
export function writeAsciiOnly(folder) {
  const mixed = [];
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const path = join(entry.parentPath, entry.name);
    const before = readFileSync(path, 'utf8');
    const { source, left } = asciiOnly(before);
    if (source !== before) writeFileSync(path, source);
    if (left > 0) mixed.push(path);
  }
  return mixed;
}
