/**
 * The broker crashes mid-turn: a gateway and a worker (real entry points, child processes) on
 * a private nats-server that is SIGKILLed while a turn streams and restarted on the same port
 * and store directory. Live events published during the outage are lost; Postgres is the
 * source of truth and the gateway fills the gap by seq.
 */

import {
  natsServerAvailable,
  PrivateNatsServer,
  sleep,
  testPostgresUrl,
} from '@chunklog/test-infra';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createE2eBackend, type E2eBackend, type E2eGateway } from './e2e-backend';
import { GatewayClient } from './gateway-client';
import { openLedgerEventSource } from './ledger-event-source';
import { StreamLedger } from './stream-ledger';

const postgresUrl = await testPostgresUrl();
const runnable = postgresUrl !== null && natsServerAvailable();
if (!runnable) {
  console.warn(
    '!!! SKIPPED: the NATS restart e2e suite needs a real Postgres and a nats-server binary',
  );
}

async function readyStatus(gateway: E2eGateway): Promise<number> {
  return (await fetch(`${gateway.baseUrl}/readyz`)).status;
}

async function waitForReadyStatus(gateway: E2eGateway, status: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while ((await readyStatus(gateway)) !== status) {
    if (Date.now() > deadline)
      throw new Error(`/readyz did not answer ${status} in ${timeoutMs} ms`);
    await sleep(50);
  }
}

describe.skipIf(!runnable)('a nats-server restart mid-turn', () => {
  let nats: PrivateNatsServer;
  let backend: E2eBackend;
  let gateway: E2eGateway;
  let client: GatewayClient;

  beforeAll(async () => {
    nats = await PrivateNatsServer.start();
    backend = await createE2eBackend({
      postgresUrl: postgresUrl!,
      natsUrl: nats.url,
      leaseMs: 1_500,
    });
    [gateway] = await Promise.all([
      backend.startGateway(),
      backend.startWorker({ workerId: 'worker-on-private-nats' }),
    ]);
    client = new GatewayClient(gateway.baseUrl, backend.tenants.alpha.key);
  });

  // A failure's explanation is often in the services' logs.
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => console.info(backend.processOutputs()));
  });

  afterAll(async () => {
    await backend?.close();
    await nats?.dispose();
  });

  /** Opens an SSE client on a new tab, sends the script, and waits for the first tool call. */
  async function startTurn(title: string, script: string) {
    const tabId = await client.createTab(title);
    const ledger = new StreamLedger();
    const source = openLedgerEventSource(
      `${gateway.baseUrl}/v1/tabs/${tabId}/events`,
      ledger,
      client.authorization,
    );
    await source.opened;
    await client.sendMessage(tabId, script);
    await ledger.waitUntil(
      () => ledger.seals.some((chunk) => chunk.type === 'tool_call'),
      20_000,
      'the first tool call',
    );
    return { tabId, ledger, source };
  }

  /**
   * Waits for the ledger to hold every stored chunk of the finished turn (and its turn-done when
   * `turnDone`); on timeout, says where the turn stood.
   */
  async function expectCaughtUp(
    tabId: string,
    ledger: StreamLedger,
    options: { timeoutMs: number; turnDone: boolean },
  ) {
    const startedAt = Date.now();
    try {
      if (options.turnDone) {
        await ledger.waitUntil(() => ledger.turnsDone.length === 1, options.timeoutMs, 'turn-done');
      } else {
        await waitForIdle(client, tabId, options.timeoutMs);
      }
      const rest = await client.readAllChunks(tabId);
      await ledger.waitUntil(
        () => ledger.lastSeq === rest.length,
        options.timeoutMs - (Date.now() - startedAt),
        'the last seal',
      );
    } catch (error) {
      const stored = await client.readAllChunks(tabId);
      const tab = await client.getTab(tabId);
      throw new Error(
        `${(error as Error).message}\nstored (ms after the wait began): ${stored
          .map((chunk) => `${chunk.seq}:${chunk.type}@${chunk.createdAt - startedAt}`)
          .join(' ')}\ntab: ${tab.status}`,
      );
    }
    const rest = await client.readAllChunks(tabId);
    expect(ledger.violations.join('\n')).toBe('');
    expect(ledger.seals.map((chunk) => chunk.seq)).toEqual(rest.map((_, index) => index + 1));
    expect(ledger.seals).toEqual(rest);
    if (options.turnDone) expect(ledger.turnsDone[0]?.reason).toBe('completed');
    expect(rest.filter((chunk) => chunk.role === 'user')).toHaveLength(1);
    expect(rest.at(-1)?.type).toBe('text');
    expect((await client.getTab(tabId)).status).toBe('idle');
  }

  it('fills the gap when the turn keeps streaming after the broker is back', async () => {
    // Tool steps seal chunks while the broker is down; the slow answer streams after it is back.
    // The answer (200 words at 40 a second) outlasts the outage and the client's reconnect
    // even on a loaded machine, so the turn is surely still running when the broker is back.
    const { tabId, ledger, source } = await startTurn(
      'broker crash',
      'outage [[sim: tool sleep {"milliseconds":250}]] [[sim: steps 4]] [[sim: words 200]] [[sim: rate 40]]',
    );
    try {
      await nats.kill();
      const sealedAtCrash = ledger.lastSeq;
      await waitForReadyStatus(gateway, 503, 10_000);
      await sleep(700);
      const storedDuringOutage = (await client.readAllChunks(tabId)).length;
      await nats.restart();
      await waitForReadyStatus(gateway, 200, 15_000);
      // The worker kept going while the broker was down; the turn is still running.
      expect(storedDuringOutage).toBeGreaterThan(sealedAtCrash);
      expect((await client.getTab(tabId)).status).toBe('running');
      await expectCaughtUp(tabId, ledger, { timeoutMs: 20_000, turnDone: true });
    } finally {
      source.close();
    }
  }, 60_000);

  // Everything after the crash, turn-done included, is published while the broker is down and
  // lost (core NATS is at most once). The seals come back from Postgres: the gateway reconciles
  // streamed tabs with the store every few seconds (limits.reconcileMs, 5 s by default). A lost
  // turn-done is not replayed (it has no seq): the client learns the tab is idle from REST.
  it('catches the stream up once the broker is back when the turn ended during the outage', async () => {
    const { tabId, ledger, source } = await startTurn(
      'turn ends in the dark',
      'short outage turn [[sim: tool sleep {"milliseconds":100}]] [[sim: steps 2]] [[sim: words 20]]',
    );
    try {
      await nats.kill();
      await waitForReadyStatus(gateway, 503, 10_000);
      // The gateway must not accept (202) a message it cannot queue durably.
      const refusing = Date.now();
      const refused = await fetch(`${gateway.baseUrl}/v1/tabs/${tabId}/messages`, {
        method: 'POST',
        headers: { ...client.authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'during the outage', mode: 'enqueue' }),
      });
      console.info(`message refused during the outage after ${Date.now() - refusing} ms`);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ error: { code: 'unavailable' } });
      await waitForIdle(client, tabId, 15_000);
      await nats.restart();
      await waitForReadyStatus(gateway, 200, 15_000);
      await expectCaughtUp(tabId, ledger, { timeoutMs: 12_000, turnDone: false });
    } finally {
      source.close();
    }
  }, 60_000);
});

async function waitForIdle(client: GatewayClient, tabId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while ((await client.getTab(tabId)).status !== 'idle') {
    if (Date.now() > deadline) throw new Error(`tab ${tabId} still running after ${timeoutMs} ms`);
    await sleep(100);
  }
}
