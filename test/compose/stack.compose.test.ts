import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComposeProject, containerState, docker } from './docker-cli';
import { reportFigure } from './figures';
import { exactlyOnce, GatewayClient, TabWatcher, waitUntilOk } from './tab-watcher';

const root = join(import.meta.dirname, '..', '..');
const apiKey = `ck_${randomBytes(24).toString('base64url')}`;
let project: ComposeProject;
let gateway: GatewayClient;

/** The worker container holding a tab's lease (a worker's id is its hostname, then its pid). */
async function leaseHolder(tabId: string): Promise<string> {
  const [postgres] = await project.containers('postgres');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const owner = (
      await docker(
        'exec',
        postgres!,
        'psql',
        '-U',
        'chunklog',
        '-d',
        'chunklog',
        '-Atc',
        `SELECT lease_owner FROM tabs WHERE id = '${tabId}'`,
      )
    ).trim();
    const workers = await project.containers('agent-worker');
    const holder = workers.find((id) => owner !== '' && owner.startsWith(id.slice(0, 12)));
    if (holder) return holder;
    if (Date.now() > deadline) throw new Error(`no worker holds tab ${tabId} (owner "${owner}")`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A new tab with a watcher on its stream and a turn of about `seconds` s started in it. */
async function turnInNewTab(title: string, seconds: number) {
  const tabId = await gateway.createTab(title);
  const watcher = new TabWatcher([gateway.url], tabId, apiKey);
  await gateway.send(tabId, `[[sim: words ${seconds * 40}]] [[sim: rate 40]] ${title}`);
  await watcher.waitFor((event) => event.event === 'chunk-delta', 60_000);
  return { tabId, watcher };
}

beforeAll(async () => {
  const port = await freePort();
  project = new ComposeProject(
    `chunklog-test-${randomBytes(4).toString('hex')}`,
    [join(root, 'docker-compose.yml')],
    { API_KEYS: `compose:${apiKey}`, GATEWAY_PORT: String(port) },
  );
  gateway = new GatewayClient(`http://127.0.0.1:${port}`, apiKey);
  const started = Date.now();
  await project.run('up', '-d', '--no-build');
  await waitUntilOk(`${gateway.url}/readyz`, 300_000);
  reportFigure('stack cold start to ready (up -d to /readyz 200)', Date.now() - started, 'ms');
});

afterAll(async () => {
  await project?.run('down', '-v', '--remove-orphans').catch(() => {});
});

describe('the compose stack', () => {
  it('publishes the gateway on 127.0.0.1 only and asks for the API key it was given', async () => {
    const [container] = await project.containers('gateway');
    const published = await docker('port', container!, '8080/tcp');
    expect(published.trim().split('\n')).toEqual([expect.stringMatching(/^127\.0\.0\.1:\d+$/)]);
    expect((await fetch(`${gateway.url}/v1/tabs`)).status).toBe(401);
    expect(await gateway.createTab('key works')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports every long-running service healthy', async () => {
    for (const service of ['postgres', 'nats', 'sim', 'gateway', 'agent-worker']) {
      for (const id of await project.containers(service)) {
        const deadline = Date.now() + 120_000;
        let health = '';
        while (health !== 'healthy' && Date.now() < deadline) {
          health = (await docker('inspect', '-f', '{{.State.Health.Status}}', id)).trim();
          if (health !== 'healthy') await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
        expect(health, service).toBe('healthy');
      }
    }
  });

  it('streams a turn over SSE, and a client that reconnects sees every seq exactly once', async () => {
    const { tabId, watcher } = await turnInNewTab('resume', 4);
    watcher.dropConnection();
    await watcher.waitFor((event) => event.event === 'turn-done', 60_000);
    await watcher.stop();
    const log = await gateway.log(tabId);
    expect(watcher.connections).toBeGreaterThanOrEqual(2);
    expect(exactlyOnce(watcher.seals())).toEqual({ duplicates: 0, missing: 0 });
    expect(Math.max(...watcher.seals())).toBe(log.at(-1)!.seq);
  });

  it('completes a turn whose worker is killed mid-turn on another worker', async () => {
    const { tabId, watcher } = await turnInNewTab('kill', 20);
    const holder = await leaseHolder(tabId);
    const killedAt = Date.now();
    await docker('kill', holder);
    const seen = watcher.events.length;
    const resumed = await watcher.waitFor(() => true, 120_000, seen);
    reportFigure(
      'takeover after docker kill (kill to the next event of the turn)',
      resumed.at - killedAt,
      'ms',
    );
    const done = await watcher.waitFor((event) => event.event === 'turn-done', 120_000, seen);
    reportFigure('docker kill to turn-done', done.at - killedAt, 'ms');
    await watcher.stop();
    expect(done.data.reason).toBe('completed');
    expect(exactlyOnce(watcher.seals())).toEqual({ duplicates: 0, missing: 0 });
    // Back to two workers for the next test.
    await docker('start', holder);
    await waitUntilHealthy(holder);
  });

  it('lets a worker stopped mid-turn finish or hand over its turn within its grace period', async () => {
    const { tabId, watcher } = await turnInNewTab('stop', 6);
    const holder = await leaseHolder(tabId);
    const stoppedAt = Date.now();
    await docker('stop', '--time', '30', holder);
    const stopMs = Date.now() - stoppedAt;
    const done = await watcher.waitFor((event) => event.event === 'turn-done', 120_000);
    reportFigure('docker stop of a busy worker: the stop itself', stopMs, 'ms');
    reportFigure('docker stop of a busy worker to its turn-done', done.at - stoppedAt, 'ms');
    await watcher.stop();
    expect(done.data.reason).toBe('completed');
    // Exit code 0: the worker drained and exited itself; Docker's SIGKILL would make it 137.
    expect(await containerState(holder)).toEqual({ running: false, exitCode: 0 });
    expect(exactlyOnce(watcher.seals())).toEqual({ duplicates: 0, missing: 0 });
  });

  it('leaves no container, volume or network after down -v', async () => {
    await project.run('down', '-v', '--remove-orphans');
    expect(await project.leftovers()).toEqual([]);
  });
});

async function waitUntilHealthy(id: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const health = (await docker('inspect', '-f', '{{.State.Health.Status}}', id)).trim();
    if (health === 'healthy') return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`container ${id} not healthy in time`);
}
