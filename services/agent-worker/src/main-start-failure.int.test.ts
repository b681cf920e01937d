import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, freePort, testPostgresUrl } from '@chunklog/test-infra';
import { describe, expect, it } from 'vitest';

const mainPath = fileURLToPath(new URL('./main.ts', import.meta.url));
const postgresUrl = await testPostgresUrl();

/** Runs `npm run start:worker`'s entry until it exits; its exit code and output. */
function runMain(
  environment: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', mainPath], {
    env: { PATH: process.env.PATH, SIMULATOR_URL: 'http://127.0.0.1:9', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (part) => {
    output += part;
  });
  child.stderr.on('data', (part) => {
    output += part;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('npm run start:worker (main.ts) when a dependency is unreachable', () => {
  it('exits 1 with one line naming Postgres when DATABASE_URL cannot be reached', async () => {
    const { code, output } = await runMain({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/none`,
      NATS_URL: `nats://127.0.0.1:${await freePort()}`,
    });
    expect(code).toBe(1);
    expect(output).toMatch(
      /^chunklog worker failed to start: Postgres \(DATABASE_URL\): connect ECONNREFUSED/m,
    );
    expect(output).not.toMatch(/^\s+at /m);
  });

  it.skipIf(!postgresUrl)(
    'exits 1 with one line naming NATS when NATS_URL cannot be reached',
    async () => {
      const database = await createTestDatabase(postgresUrl!);
      try {
        const { code, output } = await runMain({
          DATABASE_URL: database.url,
          NATS_URL: `nats://127.0.0.1:${await freePort()}`,
        });
        expect(code).toBe(1);
        expect(output).toMatch(/^chunklog worker failed to start: NATS \(NATS_URL\): /m);
        expect(output).not.toMatch(/^\s+at /m);
      } finally {
        await database.drop();
      }
    },
  );
});
