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
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfChanged, listFiles } from './build-if-changed.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The entry files of dist/, one per runnable process or command: dist/<name>.js ← its main. */
const entryPoints = JSON.parse(readFileSync(join(root, 'scripts', 'entry-points.json'), 'utf8'));

const workspaceFolders = ['packages', 'services'].flatMap((group) =>
  readdirSync(join(root, group))
    .sort()
    .map((name) => join(root, group, name)),
);

/** Bare imports of anything but a workspace package stay imports, resolved at run time. */
const externalPackages = {
  name: 'external-packages',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@chunklog/') ? undefined : { path: args.path, external: true },
    );
  },
};

await buildIfChanged({
  label: 'server',
  root,
  distDir: join(root, 'dist'),
  inputs: [
    fileURLToPath(import.meta.url),
    fileURLToPath(new URL('./build-if-changed.mjs', import.meta.url)),
    join(root, 'scripts', 'entry-points.json'),
    join(root, 'package.json'),
    ...workspaceFolders.flatMap((folder) => [
      ...listFiles(join(folder, 'package.json')),
      ...listFiles(join(folder, 'src')).filter((file) => !file.endsWith('.test.ts')),
    ]),
  ],
  async build(outDir) {
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
  },
});
