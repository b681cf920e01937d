/**
 * Builds the publishable package into dist/package: ESM bundles of the client and of its AI SDK
 * transport (`@chunklog/client/ai-sdk`; chunk-core bundled in, no zod or `ai` at run time), the declarations of the client and of chunk-core (zod stays a dependency:
 * they name its types), a package.json without workspace dependencies, and the README.
 * Publish or pack that folder: `npm pack packages/client/dist/package`.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'package');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

await build({
  configFile: false,
  root,
  logLevel: 'warn',
  build: {
    // The AI SDK transport is an entry of its own: a page that does not import it carries none
    // of it, and `ai` (types only) is needed by those who do.
    lib: {
      entry: { index: 'src/index.ts', 'ai-sdk': 'src/ai-sdk/index.ts' },
      formats: ['es'],
      fileName: (_format, name) => `${name}.js`,
    },
    outDir: out,
    emptyOutDir: true,
    target: 'es2022',
    minify: false,
    sourcemap: true,
    rolldownOptions: {
      external: ['zod', 'ai'],
      // chunk-core declares its zod schemas at module level and the client validates nothing
      // on arrival: building schemas is free of side effects, so none is kept, nor zod itself.
      treeshake: {
        moduleSideEffects: (id) => id !== 'zod' && !id.includes('/packages/chunk-core/'),
        manualPureFunctions: ['z'],
      },
    },
  },
});

const tsc = join(root, '..', '..', 'node_modules', '.bin', 'tsc');
execFileSync(tsc, ['-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

// The declarations import chunk-core by package name and their siblings without an extension:
// point both at files that ship, so every moduleResolution (bundler, node16, nodenext) reads them.
const types = join(out, 'types');
const coreIndex = join(types, 'chunk-core', 'src', 'index.js');
for (const file of walk(types)) {
  if (!file.endsWith('.d.ts')) continue;
  const text = readFileSync(file, 'utf8')
    .replace(/from '@chunklog\/chunk-core'/g, () => `from '${relativeImport(file, coreIndex)}'`)
    .replace(/from '(\.\.?\/[^']+?)'/g, (match, path) =>
      path.endsWith('.js') ? match : `from '${path}.js'`,
    );
  writeFileSync(file, text);
}

const published = {
  name: manifest.name,
  version: manifest.version,
  description: manifest.description,
  license: manifest.license,
  type: 'module',
  exports: {
    '.': { types: './types/client/src/index.d.ts', default: './index.js' },
    './ai-sdk': { types: './types/client/src/ai-sdk/index.d.ts', default: './ai-sdk.js' },
  },
  types: './types/client/src/index.d.ts',
  sideEffects: false,
  dependencies: { zod: manifest.dependencies.zod },
  peerDependencies: manifest.peerDependencies,
  peerDependenciesMeta: manifest.peerDependenciesMeta,
  engines: { node: '>=20.0.0' },
};
writeFileSync(join(out, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
copyFileSync(join(root, 'README.md'), join(out, 'README.md'));

function* walk(folder) {
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

function relativeImport(from, to) {
  const path = relative(dirname(from), to).split('\\').join('/');
  return path.startsWith('.') ? path : `./${path}`;
}
