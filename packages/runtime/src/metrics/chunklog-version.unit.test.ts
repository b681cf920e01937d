import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chunklogVersion } from './chunklog-version';

describe('chunklogVersion', () => {
  it("is the root package.json's version, not this package's", () => {
    const root = JSON.parse(
      readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'),
    );
    expect(root.name).toBe('chunklog');
    expect(chunklogVersion()).toBe(root.version);
  });
});
