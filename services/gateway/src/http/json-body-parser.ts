import { InvalidInputError } from '@chunklog/chunk-core';
import type { FastifyInstance } from 'fastify';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
/** With the `u` flag a surrogate pair is one code point: only a lone surrogate matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The path of the first string in `value` (keys included) that holds a lone UTF-16 surrogate,
 * such as JSON's `"\ud800"`: no UTF-8 text can store it, so it would be rewritten as U+FFFD.
 */
export function lonelySurrogatePath(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path || '/' : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const itemPath = `${path}/${key}`;
    if (LONE_SURROGATE.test(key)) return itemPath;
    const found = lonelySurrogatePath(item, itemPath);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Replaces Fastify's JSON parser with one that refuses text it would have to change: a body that
 * is not valid UTF-8, and strings with lone surrogates, answer 400 naming where; nothing is
 * stored with U+FFFD in place of what the client sent. Many JSON clients also send
 * `content-type: application/json` on every request: an empty body is no body, so cancel,
 * stream tickets and delete work for them, and routes that need a body still answer 400 from
 * their schema.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new InvalidInputError('body: not valid UTF-8'), undefined);
      return;
    }
    parseJson(request, text, (error, parsed) => {
      if (error) {
        done(error, undefined);
        return;
      }
      const path = lonelySurrogatePath(parsed);
      if (path !== null) {
        done(
          new InvalidInputError(
            `body${path}: holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not text`,
          ),
          undefined,
        );
        return;
      }
      done(null, parsed);
    });
  });
}
