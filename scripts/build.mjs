/**
 * `npm run build:server`: bundles each process's main into dist/<name>.js, plain JavaScript that
 * `node` runs (no tsx, no TypeScript at run time); the all-in-one's main loads the rest of it
 * from dist/all-in-one/. The workspace packages and most dependencies are
 * bundled in: a process then reads a few files at start-up instead of a thousand from
 * node_modules. The packages in `externalPackages` stay imports resolved from node_modules at
 * run time, so an image with dist/, drizzle/, apps/web/dist and the production node_modules
 * runs them. The migrations and the web app are found upward from the bundle (findAncestorWith
 * in @chunklog/runtime).
 *
 * Skips the build when dist/ was built from the same sources (`--force` builds anyway), so
 * `npm start` can run it every time. The build goes to a temporary folder that replaces dist/
 * whole, so a process starting from dist/ never sees half a build.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeAsciiOnly } from './ascii-only.mjs';
import { buildIfChanged, listFiles } from './build-if-changed.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The entry files of dist/, one per runnable process or command: dist/<name>.js ← its main. */
const entryPoints = JSON.parse(readFileSync(join(root, 'scripts', 'entry-points.json'), 'utf8'));

const workspaceFolders = ['packages', 'services'].flatMap((group) =>
  readdirSync(join(root, group))
    .sort()
    .map((name) => join(root, group, name)),
);

/**
 * Packages imported from node_modules at run time instead of bundled, and why: they read files
 * beside their own modules, load optional native or worker modules by name, or are loaded only
 * when a feature is configured (and must stay one shared instance with what loads them).
 */
const externalPackages = [
  '@electric-sql/pglite', // its WebAssembly and file-system bundle sit beside its modules
  '@fastify/swagger', // reads its own package.json
  '@fastify/swagger-ui', // serves its static files from its package folder
  '@modelcontextprotocol/sdk', // only with MCP servers configured
  '@opentelemetry', // the SDK only with tracing on; one API instance shared with it
  'pg', // requires pg-native by name when asked for it
  'pino', // its transports run worker files by path
];

/** True when a bare import names one of externalPackages or a module in it (`@opentelemetry`: the scope). */
function isExternal(specifier) {
  return externalPackages.some((name) => specifier === name || specifier.startsWith(`${name}/`));
}

const dependencies = {
  name: 'dependencies',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      isExternal(args.path) ? { path: args.path, external: true } : undefined,
    );
  },
};

/**
 * `node:http` through `require`: Node builds an ES module's view of a built-in by reading every
 * export, and node:http's lazy ones (WebSocket and its events) load Node's internal undici, tens
 * of milliseconds of start-up for classes chunklog never uses. The CommonJS module leaves them
 * unread; esbuild reads a named import from it when the code uses it.
 */
const httpThroughRequire = {
  name: 'http-through-require',
  setup(builder) {
    builder.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      // The stand-in's own require is Node's.
      args.namespace === 'http-through-require'
        ? { path: 'node:http', external: true }
        : { path: 'node:http', namespace: 'http-through-require' },
    );
    builder.onLoad({ filter: /.*/, namespace: 'http-through-require' }, () => ({
      contents: "module.exports = require('node:http');",
      loader: 'js',
    }));
  },
};

/**
 * Bundled CommonJS modules call `require` for Node's built-ins and for the external packages; an
 * ES module has none, so each output file makes one.
 */
const requireBanner =
  "import { createRequire as __chunklogCreateRequire } from 'node:module'; const require = __chunklogCreateRequire(import.meta.url);";

await buildIfChanged({
  label: 'server',
  root,
  distDir: join(root, 'dist'),
  inputs: [
    fileURLToPath(import.meta.url),
    fileURLToPath(new URL('./build-if-changed.mjs', import.meta.url)),
    fileURLToPath(new URL('./ascii-only.mjs', import.meta.url)),
    join(root, 'scripts', 'entry-points.json'),
    join(root, 'package.json'),
    // The bundled dependencies: a changed install changes the bundles.
    join(root, 'package-lock.json'),
    ...workspaceFolders.flatMap((folder) => [
      ...listFiles(join(folder, 'package.json')),
      ...listFiles(join(folder, 'src')).filter((file) => !file.endsWith('.test.ts')),
    ]),
  ],
  async build(outDir) {
    // Imported only when there is something to build: an up-to-date start does not wait for it.
    const { build } = await import('esbuild');
    const common = {
      absWorkingDir: root,
      outdir: outDir,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      banner: { js: requireBanner },
      plugins: [httpThroughRequire, dependencies],
      logLevel: 'warning',
    };
    const { 'all-in-one': allInOne, ...services } = entryPoints;
    // One file per process: what it imports is what it loads.
    await build({ ...common, entryPoints: services });
    // The all-in-one's main imports the rest dynamically, after turning on Node's compile cache
    // (services/all-in-one/src/main.ts): that rest, and what it imports lazily (PGlite's
    // driver, drizzle's migrator), go to chunks of its own.
    await build({
      ...common,
      entryPoints: { 'all-in-one': allInOne },
      splitting: true,
      chunkNames: 'all-in-one/[name]-[hash]',
    });
    // ASCII files load faster (scripts/ascii-only.mjs).
    for (const file of writeAsciiOnly(outDir)) {
      console.warn(`build: ${file} keeps non-ASCII text outside comments; it loads slower`);
    }
  },
});
