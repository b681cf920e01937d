import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findAncestorWith } from './find-ancestor-with';

const root = mkdtempSync(join(tmpdir(), 'find-ancestor-'));
mkdirSync(join(root, 'drizzle', 'meta'), { recursive: true });
writeFileSync(join(root, 'drizzle', 'meta', '_journal.json'), '{}');
mkdirSync(join(root, 'packages', 'store', 'src'), { recursive: true });
mkdirSync(join(root, 'dist'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('findAncestorWith', () => {
  it('finds the folder holding the path from a source file several levels down', () => {
    const source = pathToFileURL(
      join(root, 'packages', 'store', 'src', 'migrations', 'migrations-folder.ts'),
    );
    expect(findAncestorWith(source, 'drizzle/meta/_journal.json')).toBe(root);
  });

  it('finds the same folder from a bundle one level down, given as a URL string', () => {
    const bundle = pathToFileURL(join(root, 'dist', 'all-in-one.js')).href;
    expect(findAncestorWith(bundle, 'drizzle/meta/_journal.json')).toBe(root);
  });

  it('counts the starting folder itself', () => {
    expect(findAncestorWith(root, 'drizzle')).toBe(root);
  });

  it('answers null when no folder up to the file system root holds the path', () => {
    expect(findAncestorWith(join(root, 'dist'), 'no-such-folder/nor-file')).toBeNull();
  });
});
