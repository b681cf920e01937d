import { readFileSync } from 'node:fs';

/**
 * chunklog's version: the `version` of the repository's root package.json (two folders above
 * this package, from its sources or a build of them alike); `unknown` when it cannot be read.
 */
export function chunklogVersion(): string {
  try {
    const text = readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8');
    const { version } = JSON.parse(text) as { version?: unknown };
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}
