import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Node.js 24, the supported runtime, where `.ci/run` caches it (~/.cache/chunklog-node24, the
 * official binary from the npm registry), when it is there; else the Node.js running this.
 */
export function supportedNode(): string {
  const cached = join(
    process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
    'chunklog-node24',
    'node_modules',
    `node-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`,
    'bin',
    'node',
  );
  return existsSync(cached) ? cached : process.execPath;
}
