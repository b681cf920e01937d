/**
 * `npm run build:server`: bundles each process's main into dist/<name>.js, plain JavaScript that
 * `node` runs (no tsx, no TypeScript at run time). The workspace packages are bundled in; every
 * other package stays an import resolved from node_modules at run time, so an image with
 * dist/, drizzle/, apps/web/dist and the production node_modules runs them. The migrations and
 * the web app are found upward from the bundle (findAncestorWith in @chunklog/runtime).
 *
 * Skips the build when dist/ was built from the same sources (`--force` builds anyway), so
 * `npm start` can run it every time. The build goes to a temporary folder that replaces dist/
 * whole, so a process starting from dist/ never sees half a build.
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

const root = fileURLToPath(new URL('..', import.meta.url));
const distDir = join(root, 'dist');
const hashFile = '.source-hash';

/** The entry files of dist/, one per runnable process or command: dist/<name>.js ← its main. */
const entryPoints = JSON.parse(readFileSync(join(root, 'scripts', 'entry-points.json'), 'utf8'));

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

const workspaceFolders = ['packages', 'services'].flatMap((group) =>
  readdirSync(join(root, group))
    .sort()
    .map((name) => join(root, group, name)),
);
const inputs = [
  fileURLToPath(import.meta.url),
  join(root, 'scripts', 'entry-points.json'),
  join(root, 'package.json'),
  ...workspaceFolders.flatMap((folder) => [
    ...files(join(folder, 'package.json')),
    ...files(join(folder, 'src')).filter((file) => !file.endsWith('.test.ts')),
  ]),
];
const hash = createHash('sha256');
for (const file of inputs) {
  hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
}
const sourceHash = hash.digest('hex');

/** The source hash dist/ was built from, or null. */
const builtFrom = () =>
  existsSync(join(distDir, hashFile)) ? readFileSync(join(distDir, hashFile), 'utf8') : null;

/** Bare imports of anything but a workspace package stay imports, resolved at run time. */
const externalPackages = {
  name: 'external-packages',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@chunklog/') ? undefined : { path: args.path, external: true },
    );
  },
};

const force = process.argv[2] === '--force';
if (builtFrom() === sourceHash && !force) {
  console.log('server: dist/ is up to date');
} else {
  const outDir = join(root, `dist.building-${process.pid}`);
  try {
    // Imported only when there is something to build: an up-to-date start does not wait for it.
    const { build } = await import('esbuild');
    await build({
      absWorkingDir: root,
      entryPoints,
      outdir: outDir,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      plugins: [externalPackages],
      logLevel: 'warning',
    });
    writeFileSync(join(outDir, hashFile), sourceHash);
    // Two builds at once both finish: the first one's dist/ stays, so a process already
    // starting from it never sees it replaced by the same files.
    if (builtFrom() !== sourceHash || force) {
      rmSync(distDir, { recursive: true, force: true });
      renameSync(outDir, distDir);
    }
    console.log('server: built into dist/');
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
