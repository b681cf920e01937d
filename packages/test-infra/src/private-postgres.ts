/**
 * A Postgres cluster of a test's own (initdb + pg_ctl on a free port and a private socket
 * folder), for suites that stop and start the database under a running service. Never the
 * machine's shared server, which other suites use.
 *
 * Postgres refuses to run as root: when the test runs as root, every command runs as the
 * `postgres` OS user (`runuser -u postgres --`), and the cluster's folder belongs to that user.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './index';

const run = promisify(execFile);

/** Where initdb, pg_ctl and postgres are; PG_BIN_DIR overrides it. */
export const POSTGRES_BIN_DIR = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

const OS_USER = 'postgres';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust authentication. */
  url: string;
  /** Stops the server at once (`pg_ctl stop -m immediate`: a crash, no checkpoint). */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same port and data; resolves once it accepts. */
  start(): Promise<void>;
  /** Stops the server if it runs and deletes its folder. */
  dispose(): Promise<void>;
}

/** True when the Postgres binaries this needs are installed. */
export function privatePostgresAvailable(): boolean {
  return (
    existsSync(join(POSTGRES_BIN_DIR, 'initdb')) && existsSync(join(POSTGRES_BIN_DIR, 'pg_ctl'))
  );
}

/** Creates a fresh cluster on a free port and starts it. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const asRoot = process.getuid?.() === 0;
  const command = (binary: string, args: string[]): [string, string[]] => {
    const path = join(POSTGRES_BIN_DIR, binary);
    return asRoot ? ['runuser', ['-u', OS_USER, '--', path, ...args]] : [path, args];
  };
  const pg = async (binary: string, args: string[]): Promise<void> => {
    const [file, argv] = command(binary, args);
    try {
      await run(file, argv, { timeout: 60_000 });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? '';
      throw new Error(`${binary} ${args.join(' ')} failed: ${stderr.trim() || error}`, {
        cause: error,
      });
    }
  };

  const root = await mkdtemp(join(tmpdir(), 'chunklog-private-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  const logFile = join(root, 'postgres.log');
  await mkdir(socketDir);
  await writeFile(logFile, '');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', OS_USER]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', OS_USER]).toString().trim());
    for (const path of [root, socketDir, logFile]) await chown(path, uid, gid);
  }

  const port = await freePort();
  await pg('initdb', [
    '--pgdata',
    dataDir,
    '--username',
    'postgres',
    '--auth',
    'trust',
    '--encoding',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  // Appended, so these win over the defaults initdb wrote. fsync off keeps a shared machine's
  // disk out of the timings and still loses nothing committed when the server (not the
  // machine) stops: each commit writes its WAL before it returns. synchronous_commit must stay
  // on for that: off, an immediate stop loses the last commits, and tests would see it.
  const settings = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${socketDir}'`,
    'max_connections = 50',
    'shared_buffers = 16MB',
    'fsync = off',
    'full_page_writes = off',
  ];
  const configFile = join(dataDir, 'postgresql.conf');
  await writeFile(configFile, `${await readFile(configFile, 'utf8')}\n${settings.join('\n')}\n`);

  let running = false;
  const stopNow = () => {
    if (!running) return;
    running = false;
    const [file, argv] = command('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
    try {
      execFileSync(file, argv, { stdio: 'ignore', timeout: 30_000 });
    } catch {
      // Already gone.
    }
  };
  // A server is no child of this process: if the test process ends without dispose(), stop it.
  process.once('exit', stopNow);

  const server: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      if (running) throw new Error('the private Postgres already runs');
      try {
        await pg('pg_ctl', ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '60']);
      } catch (error) {
        const log = await readFile(logFile, 'utf8').catch(() => '');
        throw new Error(`${(error as Error).message}\n${log.split('\n').slice(-20).join('\n')}`, {
          cause: error,
        });
      }
      running = true;
    },
    async stop() {
      if (!running) return;
      await pg('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
      running = false;
    },
    async dispose() {
      process.off('exit', stopNow);
      await server.stop().catch(stopNow);
      await rm(root, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.dispose();
    throw error;
  }
  return server;
}
