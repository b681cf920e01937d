/**
 * chunklog in the services mode as separate processes: two gateways and two workers (the real
 * entry points) on one Postgres database and one NATS server, with the Anthropic simulator
 * in this process as the model. Clients are a standard EventSource and a WebSocket.
 */
import type { Chunk } from '@chunklog/chunk-core';
import { sleep, testNatsUrl, testPostgresUrl } from '@chunklog/test-infra';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createE2eBackend, type E2eBackend, type E2eGateway } from './e2e-backend';
import { GatewayClient } from './gateway-client';
import { openLedgerEventSource } from './ledger-event-source';
import { openLedgerWebSocket } from './ledger-web-socket';
import { seededRandom } from './seeded-random';
import type { ServiceProcess } from './service-process';
import { StreamLedger } from './stream-ledger';

const LEASE_MS = 1_500;
const postgresUrl = await testPostgresUrl();
const natsUrl = await testNatsUrl();
const reachable = postgresUrl !== null && natsUrl !== null;
if (!reachable) {
  console.warn('!!! SKIPPED: the multi-process e2e suite needs a real Postgres and NATS');
}

/** Each seq once, 1..N, and exactly the REST pages. */
function expectSameAsRest(received: Chunk[], rest: Chunk[]): void {
  expect(received.map((chunk) => chunk.seq)).toEqual(rest.map((_, index) => index + 1));
  expect(received).toEqual(rest);
}

describe.skipIf(!reachable)('services mode: two gateways, two workers', () => {
  let backend: E2eBackend;
  let gatewayA: E2eGateway;
  let gatewayB: E2eGateway;
  const workers: ServiceProcess[] = [];
  let clientA: GatewayClient;
  let clientB: GatewayClient;

  beforeAll(async () => {
    backend = await createE2eBackend({
      postgresUrl: postgresUrl!,
      natsUrl: natsUrl!,
      leaseMs: LEASE_MS,
    });
    // Started together, as a deployment (a rollout, compose replicas) starts them: both
    // bootstrap the same API_KEYS at once (api-key-bootstrap-race.e2e.test.ts).
    [gatewayA, gatewayB] = await Promise.all([
      backend.startGateway({ name: 'gateway-a' }),
      backend.startGateway({ name: 'gateway-b' }),
    ]);
    workers.push(
      ...(await Promise.all([
        backend.startWorker({ workerId: 'worker-1' }),
        backend.startWorker({ workerId: 'worker-2' }),
      ])),
    );
    clientA = new GatewayClient(gatewayA.baseUrl, backend.tenants.alpha.key);
    clientB = new GatewayClient(gatewayB.baseUrl, backend.tenants.alpha.key);
  });

  // A failure's explanation is often in the services' logs.
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => console.info(backend.processOutputs()));
  });

  afterAll(async () => {
    await backend?.close();
  });

  it('shows a client of gateway A a turn posted through gateway B, equal to the REST pages', async () => {
    const tabId = await clientB.createTab('cross-gateway');
    const sse = new StreamLedger();
    const source = openLedgerEventSource(
      `${gatewayA.baseUrl}/v1/tabs/${tabId}/events`,
      sse,
      clientA.authorization,
    );
    // A ticket issued by gateway B opens a stream on gateway A (they share the ticket secret).
    const ticket = await clientB.streamTicket(tabId);
    const ticketed = new StreamLedger();
    const ticketSource = openLedgerEventSource(
      `${gatewayA.baseUrl}/v1/tabs/${tabId}/events?ticket=${encodeURIComponent(ticket)}`,
      ticketed,
    );
    const ws = new StreamLedger();
    const socket = await openLedgerWebSocket(
      `${gatewayA.baseUrl.replace('http', 'ws')}/v1/tabs/${tabId}/ws`,
      ws,
      clientA.authorization,
    );
    await Promise.all([source.opened, ticketSource.opened]);
    try {
      const chunkId = await clientB.sendMessage(
        tabId,
        'hello across gateways [[sim: tool get_time {}]] [[sim: steps 1]] [[sim: words 40]]',
      );
      for (const ledger of [sse, ticketed, ws]) {
        await ledger.waitUntil(() => ledger.turnsDone.length === 1, 20_000, 'turn-done');
      }
      const rest = await clientA.readAllChunks(tabId);
      expect(rest[0]).toMatchObject({ id: chunkId, role: 'user', type: 'text', seq: 1 });
      expect(rest.map((chunk) => chunk.type)).toEqual(['text', 'tool_call', 'tool_result', 'text']);
      for (const ledger of [sse, ticketed, ws]) {
        expect(ledger.violations.join('\n')).toBe('');
        expectSameAsRest(ledger.seals, rest);
        expect(ledger.turnsDone[0]?.reason).toBe('completed');
        // The final answer streamed live, character for character.
        const answer = rest.at(-1)!;
        expect(ledger.blockTexts().get(answer.id)?.text).toBe(
          (answer.data as { text: string }).text,
        );
      }
      expect(await clientB.readAllChunks(tabId)).toEqual(rest);
      // Each gateway counts what it relayed itself; turns are counted by the workers.
      const metricsA = await readMetrics(gatewayA.baseUrl);
      const metricsB = await readMetrics(gatewayB.baseUrl);
      expect(
        metricsA('chunklog_events_relayed_total{transport="sse",event="chunk-seal"}'),
      ).toBeGreaterThanOrEqual(2 * rest.length);
      expect(
        metricsA('chunklog_events_relayed_total{transport="ws",event="chunk-seal"}'),
      ).toBeGreaterThanOrEqual(rest.length);
      for (const metrics of [metricsA, metricsB]) {
        expect(metrics('chunklog_turns_total{reason="completed"}')).toBe(0);
        expect(metrics(`chunklog_build_info{version="0.1.0",node="${process.version}"}`)).toBe(1);
      }
      // Another tenant's key, on either gateway: the tab does not exist for it.
      const beta = backend.tenants.beta.key;
      for (const [method, path] of [
        ['GET', `/v1/tabs/${tabId}`],
        ['GET', `/v1/tabs/${tabId}/chunks`],
        ['GET', `/v1/tabs/${tabId}/events`],
        ['POST', `/v1/tabs/${tabId}/stream-tickets`],
      ] as const) {
        for (const gateway of [gatewayA, gatewayB]) {
          const response = await fetch(`${gateway.baseUrl}${path}`, {
            method,
            headers: { authorization: `Bearer ${beta}` },
          });
          expect(response.status, `${method} ${path}`).toBe(404);
          expect(await response.json()).toMatchObject({ error: { code: expect.any(String) } });
        }
      }
      // The ticket is good for its tab only, on any gateway.
      const otherTab = await clientA.createTab('other');
      const refused = await fetch(
        `${gatewayA.baseUrl}/v1/tabs/${otherTab}/events?ticket=${encodeURIComponent(ticket)}`,
      );
      expect([401, 404]).toContain(refused.status);
      expect(await refused.json()).toMatchObject({ error: { code: expect.any(String) } });
    } finally {
      source.close();
      ticketSource.close();
      socket.close();
    }
  });

  it('delivers every seq exactly once, in order, and every block’s text, across 100 random disconnects', async () => {
    const seed = Number(process.env.E2E_SEED ?? Date.now() % 1_000_000);
    const random = seededRandom(seed);
    const tabId = await clientA.createTab('resume');
    const turns = 12;
    for (let turn = 0; turn < turns; turn += 1) {
      // Slow token rates keep blocks open for a while, so many disconnects land mid-block.
      const script =
        turn % 3 === 2
          ? '[[sim: tool get_time {}]] [[sim: steps 1]] [[sim: words 30]] [[sim: rate 60]]'
          : `[[sim: words ${40 + turn * 3}]] [[sim: rate 60]]`;
      await (turn % 2 === 0 ? clientA : clientB).sendMessage(tabId, `turn ${turn} ${script}`);
    }

    const ledger = new StreamLedger();
    const ticketFrom = { a: clientA, b: clientB };
    let disconnects = 0;
    while (disconnects < 100) {
      const gateway = random() < 0.5 ? gatewayA : gatewayB;
      const after = ledger.lastSeq;
      const style = Math.floor(random() * 4);
      const base = `${gateway.baseUrl}/v1/tabs/${tabId}`;
      // Four ways to resume: the header EventSource itself sends, ?after=, a ticket (issued by
      // either gateway), and a WebSocket with ?after=.
      let connection: { close(): void };
      if (style === 3) {
        connection = await openLedgerWebSocket(
          `${base.replace('http', 'ws')}/ws?after=${after}`,
          ledger,
          clientA.authorization,
        );
      } else {
        const source =
          style === 0
            ? openLedgerEventSource(`${base}/events`, ledger, {
                ...clientA.authorization,
                'last-event-id': String(after),
              })
            : style === 1
              ? openLedgerEventSource(
                  `${base}/events?after=${after}`,
                  ledger,
                  clientA.authorization,
                )
              : openLedgerEventSource(
                  `${base}/events?after=${after}&ticket=${encodeURIComponent(
                    await ticketFrom[random() < 0.5 ? 'a' : 'b'].streamTicket(tabId),
                  )}`,
                  ledger,
                );
        await source.opened;
        connection = source;
      }
      await sleep(20 + random() * 280);
      connection.close();
      disconnects += 1;
    }

    const final = openLedgerEventSource(
      `${gatewayB.baseUrl}/v1/tabs/${tabId}/events?after=${ledger.lastSeq}`,
      ledger,
      clientA.authorization,
    );
    try {
      await final.opened;
      const userChunks = () => ledger.seals.filter((chunk) => chunk.role === 'user').length;
      await ledger.waitUntil(
        () => userChunks() === turns && ledger.turnsDone.length > 0,
        40_000,
        'every turn to start',
      );
      await waitForIdle(clientA, tabId, 30_000);
      const rest = await clientA.readAllChunks(tabId);
      await ledger.waitUntil(() => ledger.lastSeq === rest.length, 5_000, 'the last seal');

      console.info(
        `resume run (seed ${seed}): ${ledger.connections} connections, ` +
          `${ledger.midBlockDisconnects} mid-block disconnects, ${ledger.deltasReceived} deltas, ` +
          `${rest.length} chunks`,
      );
      expect(ledger.violations.join('\n'), `seed ${seed}`).toBe('');
      expectSameAsRest(ledger.seals, rest);
      expect(rest.filter((chunk) => chunk.role === 'user')).toHaveLength(turns);
      // Every streamed block that was sealed: what the client reassembled is the stored text
      // (or a prefix of it, when the seal arrived while the client was away).
      const sealedTexts = new Map(
        rest.flatMap((chunk) =>
          chunk.type === 'text' ? [[chunk.id, (chunk.data as { text: string }).text]] : [],
        ),
      );
      for (const [id, block] of ledger.blockTexts()) {
        const stored = sealedTexts.get(id);
        expect(stored, `block ${id} streamed but never stored`).toBeDefined();
        expect(stored!.startsWith(block.text)).toBe(true);
      }
      // The run really exercised mid-block resumes, not only resumes between turns.
      expect(ledger.midBlockDisconnects, `seed ${seed}`).toBeGreaterThanOrEqual(20);
      expect(ledger.connections).toBeGreaterThanOrEqual(101);
    } finally {
      final.close();
    }
  }, 90_000);

  it('keeps the log gap-free when the worker running a turn is SIGKILLed: the other takes over', async () => {
    const tabId = await clientA.createTab('takeover');
    const ledger = new StreamLedger();
    const source = openLedgerEventSource(
      `${gatewayA.baseUrl}/v1/tabs/${tabId}/events`,
      ledger,
      clientA.authorization,
    );
    await source.opened;
    try {
      await clientB.sendMessage(
        tabId,
        'survive a crash [[sim: tool sleep {"milliseconds":300}]] [[sim: steps 2]] [[sim: words 60]] [[sim: rate 40]]',
      );
      // Kill mid-block: wait for deltas of the final answer, then find who holds the lease.
      await ledger.waitUntil(
        () =>
          ledger.deltasReceived > 3 && ledger.seals.some((chunk) => chunk.type === 'tool_result'),
        20_000,
        'the answer to stream',
      );
      const lease = await backend.store.getLease(tabId);
      const victim = workers.find((worker) => worker.name === lease?.owner);
      expect(victim, `lease owner ${lease?.owner}`).toBeDefined();
      await victim!.stop('SIGKILL');
      const killedAt = Date.now();

      await ledger.waitUntil(() => ledger.turnsDone.length === 1, 20_000, 'turn-done');
      const takeoverMs = Date.now() - killedAt;
      const rest = await clientA.readAllChunks(tabId);
      await ledger.waitUntil(() => ledger.lastSeq === rest.length, 5_000, 'the last seal');

      expect(ledger.violations.join('\n')).toBe('');
      expectSameAsRest(ledger.seals, rest);
      expect(new Set(rest.map((chunk) => chunk.id)).size).toBe(rest.length);
      expect(new Set(rest.map((chunk) => chunk.turnId)).size).toBe(1);
      expect(rest.some((chunk) => chunk.type === 'system')).toBe(true);
      // At most the block open at the crash is lost: every other streamed block was stored.
      const lost = [...ledger.blockTexts().values()].filter((block) => block.sealedText === null);
      expect(lost.length).toBeLessThanOrEqual(1);
      expect(['completed', 'error']).toContain(ledger.turnsDone[0]?.reason);
      expect(takeoverMs).toBeLessThan(LEASE_MS * 6);
      expect((await clientA.getTab(tabId)).status).toBe('idle');
    } finally {
      source.close();
    }
  }, 60_000);

  it('keeps a message accepted while no worker runs, and runs it once a worker starts', async () => {
    for (const worker of workers) await worker.stop('SIGTERM');
    const tabId = await clientA.createTab('no workers');
    const ledger = new StreamLedger();
    const source = openLedgerEventSource(
      `${gatewayB.baseUrl}/v1/tabs/${tabId}/events`,
      ledger,
      clientA.authorization,
    );
    await source.opened;
    try {
      const chunkId = await clientA.sendMessage(tabId, 'anyone there? [[sim: words 12]]');
      await sleep(500);
      expect(await clientA.readAllChunks(tabId)).toEqual([]);
      workers.push(await backend.startWorker({ workerId: 'worker-late' }));
      await ledger.waitUntil(() => ledger.turnsDone.length === 1, 20_000, 'turn-done');
      const rest = await clientA.readAllChunks(tabId);
      await ledger.waitUntil(() => ledger.lastSeq === rest.length, 5_000, 'the last seal');
      expect(ledger.violations.join('\n')).toBe('');
      expectSameAsRest(ledger.seals, rest);
      expect(rest.map((chunk) => [chunk.role, chunk.type])).toEqual([
        ['user', 'text'],
        ['assistant', 'text'],
      ]);
      expect(rest[0]?.id).toBe(chunkId);
    } finally {
      source.close();
    }
  }, 60_000);

  it('ends streams with a resume point when a gateway shuts down mid-turn; the other gateway resumes them', async () => {
    const tabId = await clientB.createTab('gateway shutdown');
    const ledger = new StreamLedger();
    const first = openLedgerEventSource(
      `${gatewayA.baseUrl}/v1/tabs/${tabId}/events`,
      ledger,
      clientA.authorization,
    );
    await first.opened;
    // Six seconds of answer: still running after the shutdown and the reconnect, even under load.
    await clientB.sendMessage(tabId, 'keep talking [[sim: words 300]] [[sim: rate 50]]');
    await ledger.waitUntil(() => ledger.deltasReceived > 2, 20_000, 'the answer to stream');
    const stopping = Date.now();
    await gatewayA.process.stop('SIGTERM', 8_000);
    const shutdownMs = Date.now() - stopping;
    // Graceful: the process exits by itself, after a final event naming the resume point.
    expect(gatewayA.process.child.exitCode).toBe(0);
    await ledger.waitUntil(() => ledger.streamEnds.length === 1, 5_000, 'stream-end');
    first.close();
    expect(ledger.streamEnds[0]).toEqual({ reason: 'shutdown', after: ledger.lastSeq });

    const second = openLedgerEventSource(`${gatewayB.baseUrl}/v1/tabs/${tabId}/events`, ledger, {
      ...clientA.authorization,
      'last-event-id': String(ledger.lastSeq),
    });
    try {
      await second.opened;
      // Still mid-turn, so turn-done (a live-only event) must come through the new stream.
      expect((await clientB.getTab(tabId)).status, `shutdown took ${shutdownMs} ms`).toBe(
        'running',
      );
      await ledger.waitUntil(() => ledger.turnsDone.length === 1, 20_000, 'turn-done');
      const rest = await clientB.readAllChunks(tabId);
      await ledger.waitUntil(() => ledger.lastSeq === rest.length, 5_000, 'the last seal');
      expect(ledger.violations.join('\n')).toBe('');
      expectSameAsRest(ledger.seals, rest);
      const answer = rest.at(-1)!;
      expect(ledger.blockTexts().get(answer.id)?.text).toBe((answer.data as { text: string }).text);
    } finally {
      second.close();
    }
  }, 60_000);
});

/** Reads a gateway's Prometheus text; the returned function gives one sample's value (0 if absent). */
async function readMetrics(baseUrl: string): Promise<(sample: string) => number> {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const separator = line.lastIndexOf(' ');
    samples.set(line.slice(0, separator), Number(line.slice(separator + 1)));
  }
  return (sample) => samples.get(sample) ?? 0;
}

async function waitForIdle(client: GatewayClient, tabId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await client.getTab(tabId)).status === 'idle') return;
    await sleep(100);
  }
  throw new Error(`tab ${tabId} still running after ${timeoutMs} ms`);
}
