/**
 * `npm run bench`: runs every bench/*.bench.ts (or those named on the command line) and merges
 * their figures into bench/results.json, a flat object of figure name → number.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const resultsPath = join(here, 'results.json');
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => only.length === 0 || only.some((o) => name.startsWith(o)))
  .sort();

const results: Record<string, number> = existsSync(resultsPath)
  ? JSON.parse(readFileSync(resultsPath, 'utf8'))
  : {};

for (const file of files) {
  console.log(`== ${file}`);
  const module = (await import(pathToFileURL(join(here, file)).href)) as {
    default: () => Promise<Record<string, number>>;
  };
  const figures = await module.default();
  for (const [name, value] of Object.entries(figures)) {
    console.log(`${name.padEnd(44)} ${Number.isInteger(value) ? value : value.toFixed(4)}`);
    results[name] = value;
  }
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
}
console.log(`wrote ${resultsPath}`);
process.exit(0);
