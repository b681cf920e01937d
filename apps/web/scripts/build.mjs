/**
 * Builds the app into dist/ unless dist/ was built from the same sources: `npm start` runs it
 * every time, so a fresh clone gets the app and an unchanged one starts without waiting.
 * The build goes to a temporary folder that replaces dist/ whole, so a gateway (or a second
 * build running at once) never sees half a build.
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
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const appDir = fileURLToPath(new URL('..', import.meta.url));
const distDir = join(appDir, 'dist');
const hashFile = '.source-hash';
const inputs = ['index.html', 'vite.config.ts', 'package.json', 'src', 'public'];

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

// The app's sources and those of the workspace packages it bundles.
const bundled = ['chunk-core', 'client'].map((name) =>
  fileURLToPath(new URL(`../../../packages/${name}/src`, import.meta.url)),
);
const hash = createHash('sha256');
for (const file of [
  ...inputs.flatMap((input) => files(join(appDir, input))),
  ...bundled.flatMap((dir) => files(dir)),
]) {
  hash.update(relative(appDir, file)).update('\0').update(readFileSync(file)).update('\0');
}
const sourceHash = hash.digest('hex');

/** The source hash dist/ was built from, or null. */
const builtFrom = () =>
  existsSync(join(distDir, hashFile)) ? readFileSync(join(distDir, hashFile), 'utf8') : null;

if (builtFrom() === sourceHash && process.argv[2] !== '--force') {
  console.log('web app: dist/ is up to date');
} else {
  const outDir = join(appDir, `dist.building-${process.pid}`);
  try {
    await build({ root: appDir, logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    writeFileSync(join(outDir, hashFile), sourceHash);
    // Two starts at once (test files in parallel) both build: the first one's dist/ stays, so
    // a gateway already reading it never sees it replaced by the same files.
    if (builtFrom() !== sourceHash || process.argv[2] === '--force') {
      rmSync(distDir, { recursive: true, force: true });
      renameSync(outDir, distDir);
    }
    console.log('web app: built into dist/');
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
