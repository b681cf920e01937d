import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComposeProject, docker } from './docker-cli';
import { reportFigure } from './figures';
import { exactlyOnce, GatewayClient, TabWatcher, waitUntilOk } from './tab-watcher';

const root = join(import.meta.dirname, '..', '..');
const apiKey = `ck_${randomBytes(24).toString('base64url')}`;
const TABS = 4;
let project: ComposeProject;
let gateways: GatewayClient[];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface StreamInfo {
  name: string;
  config: { num_replicas: number };
  cluster?: { leader?: string; replicas?: { name: string; current: boolean }[] };
}

/** The work-queue streams as one NATS node's monitoring port reports them. */
async function streams(service: string): Promise<StreamInfo[]> {
  const [container] = await project.containers(service);
  const out = await docker(
    'exec',
    container!,
    'wget',
    '-qO-',
    'http://127.0.0.1:8222/jsz?streams=true&config=true',
  );
  const jsz = JSON.parse(out) as { account_details?: { stream_detail?: StreamInfo[] }[] };
  return (jsz.account_details ?? []).flatMap((account) => account.stream_detail ?? []);
}

/** The intake stream's state, once it exists. */
async function intakeStream(timeoutMs: number): Promise<StreamInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const intake = (await streams('nats')).find((stream) => stream.name.includes('intake'));
    // Until its replicas have elected a leader, a new stream lists every node as a replica.
    if (intake?.cluster?.leader) return intake;
    if (Date.now() > deadline) throw new Error(`no intake stream in ${timeoutMs} ms`);
    await sleep(1_000);
  }
}

/** The compose service of a NATS node's server name (`nats-1` is the service `nats`). */
const serviceOf = (serverName: string) => (serverName === 'nats-1' ? 'nats' : serverName);

/**
 * Sends until a gateway accepts (202): any gateway, the same Idempotency-Key each time, so a
 * retry of a message that was in fact stored is queued once. Resolves with the chunk id.
 */
async function sendUntilAccepted(tabId: string, text: string): Promise<string> {
  const key = randomUUID();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await gateways[attempt % gateways.length]!.send(tabId, text, key);
    } catch (error) {
      if (attempt > 200) throw error;
      await sleep(250);
    }
  }
}

beforeAll(async () => {
  const [port, port2] = [await freePort(), await freePort()];
  project = new ComposeProject(
    `chunklog-cluster-${randomBytes(4).toString('hex')}`,
    [join(root, 'docker-compose.yml'), join(root, 'docker-compose.cluster.yml')],
    {
      API_KEYS: `compose:${apiKey}`,
      GATEWAY_PORT: String(port),
      GATEWAY_2_PORT: String(port2),
      STREAM_TICKET_SECRET: randomBytes(32).toString('hex'),
    },
  );
  gateways = [port, port2].map((p) => new GatewayClient(`http://127.0.0.1:${p}`, apiKey));
  const started = Date.now();
  await project.run('up', '-d', '--no-build');
  for (const gateway of gateways) await waitUntilOk(`${gateway.url}/readyz`, 300_000);
  reportFigure('cluster cold start to both gateways ready', Date.now() - started, 'ms');
});

afterAll(async () => {
  await project?.run('down', '-v', '--remove-orphans').catch(() => {});
});

describe('the clustered stack (docker-compose.cluster.yml)', () => {
  it('runs three NATS nodes, two gateways and three workers, the intake stream on all three nodes', async () => {
    expect(await project.containers('nats-2')).toHaveLength(1);
    expect(await project.containers('nats-3')).toHaveLength(1);
    expect(await project.containers('agent-worker')).toHaveLength(3);
    expect(await project.containers('gateway-2')).toHaveLength(1);
    // The workers create the stream when they start consuming.
    const intake = await intakeStream(120_000);
    expect(intake.config.num_replicas).toBe(3);
    // As nats-1 reports it: the other two nodes are its peers (the leader among them, unless
    // nats-1 leads), so with nats-1 itself the stream is on all three.
    const replicas = (intake.cluster?.replicas ?? []).map((replica) => replica.name);
    expect(replicas).toHaveLength(2);
    expect([...new Set(['nats-1', intake.cluster?.leader, ...replicas])].sort()).toEqual([
      'nats-1',
      'nats-2',
      'nats-3',
    ]);
  });

  it('loses no accepted message and repeats no seq when a NATS node dies mid-turn and comes back', async () => {
    const tabs = await Promise.all(
      Array.from({ length: TABS }, (_, index) => gateways[index % 2]!.createTab(`tab ${index}`)),
    );
    const watchers = tabs.map(
      (tabId, index) =>
        new TabWatcher(
          index % 2 ? gateways.map((g) => g.url) : [...gateways.map((g) => g.url)].reverse(),
          tabId,
          apiKey,
        ),
    );
    const accepted = new Map<string, string[]>(tabs.map((tabId) => [tabId, []]));
    const turn = (index: number, round: number) =>
      `[[sim: words 160]] [[sim: rate 40]] tab ${index} round ${round}`;

    // Round 1: a turn in every tab; the node leading the intake stream dies while they run.
    await Promise.all(
      tabs.map(async (tabId, index) =>
        accepted.get(tabId)!.push(await sendUntilAccepted(tabId, turn(index, 1))),
      ),
    );
    await Promise.all(
      watchers.map((w) => w.waitFor((event) => event.event === 'chunk-delta', 60_000)),
    );
    const intake = await intakeStream(30_000);
    const victim = serviceOf(intake.cluster?.leader ?? 'nats-2');
    const [victimContainer] = await project.containers(victim);
    const killedAt = Date.now();
    await docker('kill', victimContainer!);

    // Round 2, while the node is down: every tab gets another message through any gateway.
    await Promise.all(
      tabs.map(async (tabId, index) =>
        accepted.get(tabId)!.push(await sendUntilAccepted(tabId, turn(index, 2))),
      ),
    );
    const allAcceptedMs = Date.now() - killedAt;
    await sleep(5_000);
    const restartedAt = Date.now();
    await docker('start', victimContainer!);
    // Round 3, as the node rejoins.
    await Promise.all(
      tabs.map(async (tabId, index) =>
        accepted.get(tabId)!.push(await sendUntilAccepted(tabId, turn(index, 3))),
      ),
    );

    // Every tab runs its three turns to the end.
    await Promise.all(
      watchers.map(async (watcher) => {
        const deadline = Date.now() + 240_000;
        while (watcher.turnsDone().length < 3) {
          if (Date.now() > deadline) throw new Error(`turns done: ${watcher.turnsDone().length}`);
          await sleep(200);
        }
      }),
    );
    const recoveredMs = Math.max(
      ...watchers.map((watcher) => watcher.turnsDone()[1]!.at - killedAt),
    );
    let rejoinMs = 0;
    for (;;) {
      const health = (
        await docker('inspect', '-f', '{{.State.Health.Status}}', victimContainer!)
      ).trim();
      if (health === 'healthy') {
        rejoinMs = Date.now() - restartedAt;
        break;
      }
      if (Date.now() - restartedAt > 120_000)
        throw new Error('the restarted node never got healthy');
      await sleep(500);
    }
    await Promise.all(watchers.map((watcher) => watcher.stop()));

    let lost = 0;
    let duplicates = 0;
    let logDuplicates = 0;
    for (const [index, tabId] of tabs.entries()) {
      const log = await gateways[0]!.log(tabId);
      const ids = log.map((chunk) => chunk.id);
      lost += accepted.get(tabId)!.filter((id) => !ids.includes(id)).length;
      logDuplicates += ids.length - new Set(ids).size;
      const seen = exactlyOnce(watchers[index]!.seals());
      duplicates += seen.duplicates;
      expect(seen.missing, `tab ${index}: seqs never seen`).toBe(0);
      expect(Math.max(...watchers[index]!.seals())).toBe(log.at(-1)!.seq);
      expect(watchers[index]!.turnsDone().map((event) => event.data.reason)).toEqual([
        'completed',
        'completed',
        'completed',
      ]);
    }
    reportFigure(
      `NATS node loss (${victim}, the intake leader): every round-2 message accepted after the kill`,
      allAcceptedMs,
      'ms',
    );
    reportFigure('NATS node loss: kill to every tab done with its round-2 turn', recoveredMs, 'ms');
    reportFigure('NATS node loss: restart to the node healthy (JetStream current)', rejoinMs, 'ms');
    reportFigure('NATS node loss: accepted messages lost', lost, 'messages');
    reportFigure('NATS node loss: seqs seen twice by a client', duplicates, 'events');
    expect(lost).toBe(0);
    expect(logDuplicates).toBe(0);
    expect(duplicates).toBe(0);
  });

  it('leaves no container, volume or network after down -v', async () => {
    await project.run('down', '-v', '--remove-orphans');
    expect(await project.leftovers()).toEqual([]);
  });
});
