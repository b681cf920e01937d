/**
 * Test infrastructure shared by every suite that needs a real Postgres or NATS.
 *
 * Order of preference: TEST_DATABASE_URL / TEST_NATS_URL when set (CI sets them), then the
 * machine's local services on their standard ports. Where neither is reachable, suites that
 * need the real server are skipped and say so loudly; contract suites still run on the
 * embedded adapters (PGlite, the in-process bus).
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const parsed = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: parsed.hostname, port: Number(parsed.port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function warnSkipped(what: string, url: string): void {
  console.warn(
    `\n!!! SKIPPED: ${what} suites: nothing reachable at ${url}. ` +
      'Set TEST_DATABASE_URL / TEST_NATS_URL or start the services; only embedded adapters ran.\n',
  );
}

/** The admin URL of the test Postgres server, or null (after a loud warning) when none is reachable. */
export async function testPostgresUrl(): Promise<string | null> {
  const url = process.env.TEST_DATABASE_URL ?? DEFAULT_DATABASE_URL;
  if (await reachable(url, 5432)) return url;
  warnSkipped('Postgres', url);
  return null;
}

/** The test NATS URL, or null (after a loud warning) when none is reachable. */
export async function testNatsUrl(): Promise<string | null> {
  const url = process.env.TEST_NATS_URL ?? DEFAULT_NATS_URL;
  if (await reachable(url, 4222)) return url;
  warnSkipped('NATS', url);
  return null;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Creates a fresh database for one test file on the test server; drop() removes it. */
export async function createTestDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `chunklog_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        // A pool's end() resolves before its connections have closed. Give them a moment to go,
        // so FORCE (which kills whatever is left) rarely hits a client that is still closing:
        // such a client reports "terminating connection due to administrator command" as an
        // error event, which is uncaught when its pool has no error listener.
        for (let attempt = 0; attempt < 40; attempt += 1) {
          const open = await client.query<{ count: number }>(
            'SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = $1',
            [name],
          );
          if (open.rows[0]!.count === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A subject prefix unique to one test file, so suites sharing a NATS server never cross. */
export function testSubjectPrefix(): string {
  return `t${randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

/** A TCP port nothing listens on right now (the caller must still cope with losing a race for it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}

/** Resolves after `milliseconds`. */
export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

export { NATS_SERVER_BINARY, natsServerAvailable, PrivateNatsServer } from './private-nats-server';
export {
  POSTGRES_BIN_DIR,
  type PrivatePostgres,
  privatePostgresAvailable,
  startPrivatePostgres,
} from './private-postgres';
