/**
 * The production build (`npm run build`): each process bundled into dist/<name>.js (the
 * all-in-one's with chunks in dist/all-in-one/), run by plain `node` with the production
 * dependencies, finding drizzle/ and apps/web/dist from dist/.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startOtlpReceiver } from '@chunklog/runtime/testing';
import { createTestDatabase, freePort, sleep, testPostgresUrl } from '@chunklog/test-infra';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import entryPoints from '../scripts/entry-points.json';

const root = join(import.meta.dirname, '..');
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'chunklog-dist-'));

beforeAll(async () => {
  // Skips what is already built from the same sources.
  await run('npm', ['run', '--silent', 'build'], { cwd: root });
}, 600_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The package each bare import of a bundle names (`@scope/name` or `name`), in the bundle and in
 * the chunks it imports (the all-in-one's, in dist/all-in-one/).
 */
function importedPackages(bundle: string, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  if (seen.has(bundle)) return names;
  seen.add(bundle);
  const source = readFileSync(join(root, 'dist', bundle), 'utf8');
  // Imports, and packages resolved to a path for a worker thread to load (`require.resolve`).
  const specifiers = /(?:^import[^'"]*?from\s*|\bimport\(\s*|\)\.resolve\(\s*)"([^"]+)"/gm;
  for (const match of source.matchAll(specifiers)) {
    const specifier = match[1]!;
    if (specifier.startsWith('.')) {
      const chunk = join(dirname(bundle), specifier);
      for (const name of importedPackages(chunk, seen)) names.add(name);
      continue;
    }
    if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
    const parts = specifier.split('/');
    names.add(specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
  }
  return names;
}

/** Every workspace package's production dependencies: what `npm ci --omit=dev` installs. */
function productionDependencies(): Set<string> {
  const folders = ['packages', 'services', 'apps'].flatMap((group) =>
    readdirSync(join(root, group)).map((name) => join(root, group, name)),
  );
  return new Set(
    folders.flatMap((folder) =>
      Object.keys(
        (
          JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
            dependencies?: Record<string, string>;
          }
        ).dependencies ?? {},
      ),
    ),
  );
}

describe('dist/ (npm run build)', () => {
  it('holds one bundle per entry point', () => {
    expect(
      readdirSync(join(root, 'dist'))
        .filter((name) => name.endsWith('.js'))
        .sort(),
    ).toEqual(
      Object.keys(entryPoints)
        .map((name) => `${name}.js`)
        .sort(),
    );
  });

  it('imports only production dependencies, PGlite only in the all-in-one, the Postgres driver only beside Postgres', () => {
    const production = productionDependencies();
    for (const name of Object.keys(entryPoints)) {
      const imported = importedPackages(`${name}.js`);
      expect(imported.size, name).toBeGreaterThan(0);
      expect(
        [...imported].filter((pkg) => !production.has(pkg)),
        name,
      ).toEqual([]);
      expect(imported.has('@electric-sql/pglite'), name).toBe(name === 'all-in-one');
      // The all-in-one runs on PGlite: loading the Postgres driver would only slow its start.
      expect(imported.has('pg'), name).toBe(name !== 'all-in-one' && name !== 'anthropic-sim');
    }
  });

  it('writes every bundle in ASCII, which Node and V8 load faster', () => {
    const files = readdirSync(join(root, 'dist'), { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.js'),
    );
    expect(files.length).toBeGreaterThan(Object.keys(entryPoints).length);
    for (const file of files) {
      expect(/[\u0080-\uffff]/.test(readFileSync(join(root, 'dist', file), 'utf8')), file).toBe(
        false,
      );
    }
  });

  it('bundles the NATS client only into the processes that talk to NATS', () => {
    // esbuild names each bundled module in a comment above its code.
    const bundlesNats = (files: string[]) =>
      files.some((file) =>
        readFileSync(join(root, 'dist', file), 'utf8').includes('// node_modules/@nats-io/'),
      );
    const allInOne = [
      'all-in-one.js',
      ...readdirSync(join(root, 'dist', 'all-in-one')).map((file) => join('all-in-one', file)),
    ];
    // The all-in-one's bus is in-process: the client would only slow its start.
    expect(bundlesNats(allInOne)).toBe(false);
    expect(bundlesNats(['gateway.js'])).toBe(true);
    expect(bundlesNats(['agent-worker.js'])).toBe(true);
  });

  it('runs the all-in-one with node on a new data folder: migrated, serving the web app, exporting its spans', async () => {
    const port = await freePort();
    // The bundle loads the OpenTelemetry SDK and exporter from node_modules only when tracing is on.
    const receiver = await startOtlpReceiver();
    const child = spawn(process.execPath, ['dist/all-in-one.js'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATA_DIR: join(scratch, 'data'),
        PORT: String(port),
        LOG_LEVEL: 'warn',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => {
      stderr += data;
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = `http://127.0.0.1:${port}`;
    try {
      const deadline = Date.now() + 240_000;
      for (;;) {
        const ready = await fetch(`${url}/readyz`).catch(() => null);
        if (ready?.status === 200) break;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`no start:\n${stderr}`);
        await sleep(100);
      }
      const created = await fetch(`${url}/v1/tabs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'from dist' }),
      });
      expect(created.status).toBe(201);
      const page = await fetch(`${url}/`);
      expect(await page.text()).toBe(
        readFileSync(join(root, 'apps', 'web', 'dist', 'index.html'), 'utf8'),
      );
      await expect
        .poll(
          () =>
            receiver
              .spans()
              .filter((span) => span.service === 'chunklog-all-in-one')
              .map((span) => span.attributes['http.route']),
          { timeout: 15_000, interval: 100 },
        )
        .toContain('/v1/tabs');
    } finally {
      child.kill('SIGTERM');
      await exited;
      await receiver.close();
    }
  }, 300_000);

  it('migrates a Postgres database with node dist/migrate.js', async (context) => {
    const adminUrl = await testPostgresUrl();
    if (!adminUrl) return context.skip();
    const database = await createTestDatabase(adminUrl);
    try {
      const { stdout } = await run(process.execPath, ['dist/migrate.js'], {
        cwd: root,
        env: { PATH: process.env.PATH, DATABASE_URL: database.url },
      });
      expect(stdout).toContain('database is up to date');
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ table: string | null }>(
          "SELECT to_regclass('public.chunks')::text AS table",
        );
        expect(rows).toEqual([{ table: 'chunks' }]);
      } finally {
        await client.end();
      }
    } finally {
      await database.drop();
    }
  }, 120_000);
});
