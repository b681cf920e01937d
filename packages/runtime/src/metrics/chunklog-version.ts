import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findAncestorWith } from '../find-ancestor-with';

/**
 * chunklog's version: the `version` of the repository's root package.json (the nearest one above
 * this module named `chunklog`, from the sources or a bundle in dist/ alike); `unknown` when
 * there is none.
 */
export function chunklogVersion(): string {
  let from: string | URL = import.meta.url;
  for (;;) {
    const folder = findAncestorWith(from, 'package.json');
    if (folder === null) return 'unknown';
    try {
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === 'chunklog' && typeof manifest.version === 'string') {
        return manifest.version;
      }
    } catch {
      // Unreadable: look further up.
    }
    const parent = dirname(folder);
    if (parent === folder) return 'unknown';
    from = parent;
  }
}
