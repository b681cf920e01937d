/**
 * The one way chunklog's build scripts skip work: a build output folder records the hash of the
 * sources it was built from, and a build runs only when that hash changed (or with `--force`).
 * The build goes to a temporary folder that replaces the output whole, so a process starting
 * from it (or a second build running at once) never sees half a build.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';

const HASH_FILE = '.source-hash';

/** Every file under `path` (or `path` itself), in a stable order; none when it is missing. */
export function listFiles(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => listFiles(join(path, name)));
}

/**
 * Runs `build(outDir)` unless `distDir` was built from the same `inputs` (file paths, hashed by
 * their path relative to `root` and their bytes). `label` names the output in the log line.
 */
export async function buildIfChanged({ label, root, distDir, inputs, build }) {
  const hash = createHash('sha256');
  for (const file of inputs) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  const sourceHash = hash.digest('hex');
  const builtFrom = () =>
    existsSync(join(distDir, HASH_FILE)) ? readFileSync(join(distDir, HASH_FILE), 'utf8') : null;

  const force = process.argv.includes('--force');
  if (builtFrom() === sourceHash && !force) {
    console.log(`${label}: dist/ is up to date`);
    return;
  }
  const outDir = join(dirname(distDir), `dist.building-${process.pid}`);
  try {
    await build(outDir);
    writeFileSync(join(outDir, HASH_FILE), sourceHash);
    // Two builds at once both finish: the first one's output stays, so a process already
    // reading it never sees it replaced by the same files.
    if (builtFrom() !== sourceHash || force) {
      rmSync(distDir, { recursive: true, force: true });
      renameSync(outDir, distDir);
    }
    console.log(`${label}: built into dist/`);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
