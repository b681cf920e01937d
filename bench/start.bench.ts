/**
 * Start-up of the all-in-one process (`npm start` without its build step): process spawn to
 * the first `/readyz` 200, the median of several runs, cold and warm alternating so outside load
 * on a shared machine hits both alike.
 *
 * - start.cold_ms: on a DATA_DIR that does not exist yet (goal ≤ 2,000), the PGlite template
 *   already made (by the unmeasured first start).
 * - start.warm_ms: on a DATA_DIR an earlier start made (goal ≤ 1,000).
 * - start.cold_ms.tsx / start.warm_ms.tsx: the same from the TypeScript sources through tsx and
 *   with initdb in every new folder (PGLITE_TEMPLATE_DIR=off), the way `npm start` ran before
 *   the bundle and the template, as the baseline of this run.
 * - start.cold_ratio / start.warm_ratio: the bundle's median ÷ the sources' median.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, sleep } from '@chunklog/test-infra';
import { median } from './percentile';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.env.BENCH_START_RUNS ?? 5);

/** How each contender starts the all-in-one process: node's arguments, and its template use. */
const contenders = {
  bundle: { args: ['dist/all-in-one.js'], template: true },
  tsx: { args: ['--import', 'tsx', 'services/all-in-one/src/main.ts'], template: false },
} as const;
type Contender = keyof typeof contenders;

async function run(command: string, args: string[]): Promise<void> {
  const child = spawn(command, args, { cwd: root, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${code}`);
}

/** Milliseconds from spawn to the first `/readyz` 200; the process is stopped afterwards. */
async function timeStart(
  contender: Contender,
  dataDir: string,
  templatesFolder: string,
): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...contenders[contender].args], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      PGLITE_TEMPLATE_DIR: contenders[contender].template ? templatesFolder : 'off',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (data) => {
    stderr += data;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let exitedEarly = false;
  void exited.then(() => {
    exitedEarly = true;
  });
  try {
    for (;;) {
      if (exitedEarly) throw new Error(`the ${contender} start exited before ready:\n${stderr}`);
      const response = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
      if (response?.status === 200) return performance.now() - started;
      await response?.body?.cancel();
      await sleep(5);
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export default async function startBench(): Promise<Record<string, number>> {
  await run('npm', ['run', '--silent', 'build']);
  const scratch = mkdtempSync(join(tmpdir(), 'chunklog-start-bench-'));
  // The bench's own template cache: the first start below makes the template, as the first
  // `npm start` on a machine does; every cold start after it copies it.
  const templates = join(scratch, 'templates');
  try {
    const samples: Record<`${Contender}.${'cold' | 'warm'}`, number[]> = {
      'bundle.cold': [],
      'bundle.warm': [],
      'tsx.cold': [],
      'tsx.warm': [],
    };
    const warmDirs = {} as Record<Contender, string>;
    for (const contender of Object.keys(contenders) as Contender[]) {
      // The first start makes the warm folder; it also fills the file cache for what follows.
      warmDirs[contender] = join(scratch, `warm-${contender}`);
      await timeStart(contender, warmDirs[contender], templates);
    }
    for (let round = 0; round < runs; round += 1) {
      for (const contender of Object.keys(contenders) as Contender[]) {
        samples[`${contender}.cold`].push(
          await timeStart(contender, join(scratch, `cold-${contender}-${round}`), templates),
        );
        samples[`${contender}.warm`].push(
          await timeStart(contender, warmDirs[contender], templates),
        );
      }
    }
    const figures = {
      'start.cold_ms': median(samples['bundle.cold']),
      'start.warm_ms': median(samples['bundle.warm']),
      'start.cold_ms.tsx': median(samples['tsx.cold']),
      'start.warm_ms.tsx': median(samples['tsx.warm']),
    };
    return {
      ...figures,
      'start.cold_ratio': figures['start.cold_ms'] / figures['start.cold_ms.tsx'],
      'start.warm_ratio': figures['start.warm_ms'] / figures['start.warm_ms.tsx'],
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
