/**
 * `npm run bench`: runs every bench/*.bench.ts (or those named on the command line) and merges
 * their figures into bench/results.json, a flat object of figure name → number.
 *
 * The benches run on Node.js 24, the supported runtime, when it is cached where `.ci/run` puts
 * it: started on an older Node.js, this script runs itself again on that one
 * (`BENCH_NODE=current` keeps the Node.js it was started on). `bench.node_major` records which.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { supportedNode } from './supported-node';

const nodeMajor = Number(process.versions.node.split('.')[0]);
if (process.env.BENCH_NODE !== 'current' && nodeMajor < 24) {
  const node = supportedNode();
  if (node !== process.execPath) {
    const again = spawnSync(
      node,
      ['--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
      { stdio: 'inherit', env: { ...process.env, BENCH_NODE: 'current' } },
    );
    process.exit(again.status ?? 1);
  }
}

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

results['bench.node_major'] = nodeMajor;
console.log(`node ${process.versions.node}`);
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
