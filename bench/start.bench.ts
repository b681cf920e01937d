/**
 * Start-up of the all-in-one process (`npm start` without its build step): process spawn to
 * the first `/readyz` 200, the median of several runs, cold and warm alternating so outside load
 * on a shared machine hits both alike. `/readyz` is asked every 5 ms from the moment the
 * process says it is running (its banner on stderr, written once it listens), not before: a
 * fetch loop from the spawn would take CPU from the start it measures.
 *
 * The processes run on Node.js 24, the supported runtime, when the binary CI caches is there
 * (`.ci/run` installs it into ~/.cache/chunklog-node24), else on the Node.js running the bench;
 * start.node_major says which. Node's compile cache goes to the bench's scratch folder, filled
 * by the unmeasured first start as a machine's first `npm start` fills it (Node ≥ 22.1).
 *
 * - start.cold_ms: on a DATA_DIR that does not exist yet (goal ≤ 2,000), the PGlite template
 *   already made (by the unmeasured first start).
 * - start.warm_ms: on a DATA_DIR an earlier start made (goal ≤ 1,000).
 * - start.cold_ms.tsx / start.warm_ms.tsx: the same from the TypeScript sources through tsx,
 *   without the compile cache and with initdb in every new folder (PGLITE_TEMPLATE_DIR=off), the
 *   way `npm start` ran before the bundle and the template, as the baseline of this run.
 * - start.node_major: the Node.js major version the processes ran on.
 * - start.cold_ratio / start.warm_ratio: the bundle's median ÷ the sources' median.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, sleep } from '@chunklog/test-infra';
import { median } from './percentile';
import { supportedNode } from './supported-node';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.env.BENCH_START_RUNS ?? 5);

const node = supportedNode();
const nodeMajor = Number(
  execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).split('.')[0],
);

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
async function timeStart(contender: Contender, dataDir: string, scratch: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(node, [...contenders[contender].args], {
    cwd: root,
    env: {
      ...process.env,
      NODE_COMPILE_CACHE: join(scratch, 'compile-cache'),
      // The baseline as `npm start` ran before the bundle: no compile cache either.
      ...(contender === 'tsx' ? { NODE_DISABLE_COMPILE_CACHE: '1' } : {}),
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      // The bench's own template cache: the first start makes the template, as the first
      // `npm start` on a machine does; every cold start after it copies it.
      PGLITE_TEMPLATE_DIR: contenders[contender].template ? join(scratch, 'templates') : 'off',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  // Said once the process listens (its banner on stderr); the polling of /readyz starts then.
  let listening = false;
  let saidListening: () => void = () => {};
  child.stderr.on('data', (data) => {
    stderr += data;
    if (!listening && stderr.includes('chunklog is running')) {
      listening = true;
      saidListening();
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let exitedEarly = false;
  void exited.then(() => {
    exitedEarly = true;
  });
  try {
    // A fetch loop from the start would take CPU from the start it measures (hundreds of
    // refused connections, a good part of a core on this 2-core machine): it waits for the
    // banner, and for an early exit, without asking anything.
    await Promise.race([
      new Promise<void>((resolve) => {
        saidListening = resolve;
        if (listening) resolve();
      }),
      exited,
    ]);
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
      await timeStart(contender, warmDirs[contender], scratch);
    }
    for (let round = 0; round < runs; round += 1) {
      for (const contender of Object.keys(contenders) as Contender[]) {
        samples[`${contender}.cold`].push(
          await timeStart(contender, join(scratch, `cold-${contender}-${round}`), scratch),
        );
        samples[`${contender}.warm`].push(await timeStart(contender, warmDirs[contender], scratch));
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
      'start.node_major': nodeMajor,
      'start.cold_ratio': figures['start.cold_ms'] / figures['start.cold_ms.tsx'],
      'start.warm_ratio': figures['start.warm_ms'] / figures['start.warm_ms.tsx'],
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
