import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  createTestDatabase,
  freePort,
  type TestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const mainPath = fileURLToPath(new URL('./main.ts', import.meta.url));
const [postgresUrl, natsUrl] = await Promise.all([testPostgresUrl(), testNatsUrl()]);

function startMain(environment: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', mainPath], {
    env: { PATH: process.env.PATH, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (part) => {
    output += part;
  });
  child.stderr?.on('data', (part) => {
    output += part;
  });
  return { child, output: () => output };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe('npm run start:gateway (main.ts)', () => {
  it('refuses to start on a bad environment, naming every problem', async () => {
    const { child, output } = startMain({ PORT: 'many' });
    expect(await exited(child)).toBe(1);
    expect(output()).toMatch(/DATABASE_URL[\s\S]*NATS_URL[\s\S]*PORT/);
  });

  it('exits 1 with one line naming Postgres when DATABASE_URL cannot be reached', async () => {
    const { child, output } = startMain({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/none`,
      NATS_URL: `nats://127.0.0.1:${await freePort()}`,
    });
    expect(await exited(child)).toBe(1);
    expect(output()).toMatch(
      /^chunklog gateway failed to start: Postgres \(DATABASE_URL\): connect ECONNREFUSED/m,
    );
    expect(output()).not.toMatch(/^\s+at /m);
  });

  describe.skipIf(!postgresUrl || !natsUrl)('on Postgres and NATS', () => {
    let database: TestDatabase;
    let gateway: { child: ChildProcess; output: () => string };
    let baseUrl: string;

    beforeAll(async () => {
      database = await createTestDatabase(postgresUrl!);
      gateway = startMain({
        DATABASE_URL: database.url,
        NATS_URL: natsUrl!,
        NATS_SUBJECT_PREFIX: testSubjectPrefix(),
        PORT: '0',
        API_KEYS: 'acme:key-of-acme',
        STREAM_TICKET_SECRET: 'a-secret-of-enough-length',
      });
      for (let attempt = 0; attempt < 300; attempt++) {
        const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(gateway.output());
        if (match?.[1]) {
          baseUrl = match[1];
          return;
        }
        if (gateway.child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`gateway did not start:\n${gateway.output()}`);
    });
    afterAll(async () => {
      if (gateway?.child.exitCode === null) gateway.child.kill('SIGKILL');
      await database?.drop();
    });

    it('exits 1 with one line naming NATS when NATS_URL cannot be reached', async () => {
      const { child, output } = startMain({
        DATABASE_URL: database.url,
        NATS_URL: `nats://127.0.0.1:${await freePort()}`,
      });
      expect(await exited(child)).toBe(1);
      expect(output()).toMatch(/^chunklog gateway failed to start: NATS \(NATS_URL\): /m);
      expect(output()).not.toMatch(/^\s+at /m);
    });

    it('migrates, bootstraps API_KEYS, serves, and shuts down ending streams with a final event', async () => {
      expect((await fetch(`${baseUrl}/readyz`)).status).toBe(200);
      const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
      expect(metrics).toContain(`chunklog_build_info{version="0.1.0",node="${process.version}"} 1`);
      expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
      expect(metrics).toMatch(/^process_resident_memory_bytes \d/m);
      expect((await fetch(`${baseUrl}/v1/tabs`)).status).toBe(401);
      const created = await fetch(`${baseUrl}/v1/tabs`, {
        method: 'POST',
        headers: { authorization: 'Bearer key-of-acme', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(created.status).toBe(201);
      const { tab } = (await created.json()) as { tab: { id: string } };
      const streamText = new Promise<string>((resolve, reject) => {
        http
          .get(
            `${baseUrl}/v1/tabs/${tab.id}/events`,
            { headers: { authorization: 'Bearer key-of-acme' } },
            (response) => {
              let text = '';
              response.setEncoding('utf8');
              response.on('data', (part) => {
                text += part;
                if (text.includes('retry:')) gateway.child.kill('SIGTERM');
              });
              response.on('end', () => resolve(text));
            },
          )
          .on('error', reject);
      });
      expect(await streamText).toContain(
        'event: stream-end\ndata: {"reason":"shutdown","after":0}',
      );
      expect(await exited(gateway.child)).toBe(0);
    });
  });
});
