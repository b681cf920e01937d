import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest folder at or above `from` (a file URL, a file or a folder path) that holds
 * `relativePath`, or null. A module finds the repository's shipped files (the migrations, the
 * built web app) this way whether it runs from its source folder or bundled into dist/, in the
 * repository or in an image that copies only dist/ and those files.
 */
export function findAncestorWith(from: string | URL, relativePath: string): string | null {
  let folder = from instanceof URL || from.startsWith('file:') ? fileURLToPath(from) : from;
  for (;;) {
    if (existsSync(join(folder, relativePath))) return folder;
    const parent = dirname(folder);
    if (parent === folder) return null;
    folder = parent;
  }
}
