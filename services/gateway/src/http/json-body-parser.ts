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
 * Fastify's JSON parser, but refusing text it would have to change: invalid UTF-8 and lone
 * surrogates answer 400, so nothing is stored with U+FFFD in it. An empty body is no body, as
 * clients that always send `content-type: application/json` expect.
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
