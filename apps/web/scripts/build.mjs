/**
 * Builds the app into dist/ unless dist/ was built from the same sources: `npm start` runs it
 * every time, so a fresh clone gets the app and an unchanged one starts without waiting.
 * The build goes to a temporary folder that replaces dist/ whole, so a gateway (or a second
 * build running at once) never sees half a build.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { buildIfChanged, listFiles } from '../../../scripts/build-if-changed.mjs';

const appDir = fileURLToPath(new URL('..', import.meta.url));
const inputs = ['index.html', 'vite.config.ts', 'package.json', 'src', 'public'];
// The app's sources and those of the workspace packages it bundles.
const bundled = ['chunk-core', 'client'].map((name) =>
  fileURLToPath(new URL(`../../../packages/${name}/src`, import.meta.url)),
);

await buildIfChanged({
  label: 'web app',
  root: appDir,
  distDir: join(appDir, 'dist'),
  inputs: [
    ...inputs.flatMap((input) => listFiles(join(appDir, input))),
    ...bundled.flatMap((dir) => listFiles(dir)),
  ],
  build: (outDir) =>
    build({ root: appDir, logLevel: 'warn', build: { outDir, emptyOutDir: true } }),
});
