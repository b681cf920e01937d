/**
 * The gateway on a private nats-server child process (never the machine's shared server, which
 * other suites use) that is killed while the gateway runs: a message posted during the outage is
 * refused with 503 at once, never stored, and accepted again once NATS is back.
 */
import { type BusLogger, createNatsBus } from '@chunklog/bus';
import { INTAKE_QUEUE, type MessageCommand } from '@chunklog/chunk-core';
import { createPgliteStore } from '@chunklog/store';
import { NATS_SERVER_BINARY, natsServerAvailable, PrivateNatsServer } from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedError } from './testing/expected-error';
import { type GatewayHarness, type JsonResponse, startGateway } from './testing/gateway-harness';
import type { Backend } from './testing/test-backends';

const serverAvailable = natsServerAvailable();
if (!serverAvailable) {
  console.warn(
    `!!! SKIPPED: the gateway NATS outage suite (no nats-server at ${NATS_SERVER_BINARY})`,
  );
}

/** Far above what the test allows a refusal to take, so only failing fast can pass it. */
const JET_STREAM_TIMEOUT_MS = 10_000;

async function waitFor(condition: () => boolean, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.skipIf(!serverAvailable)('POST /v1/tabs/:tabId/messages during a NATS outage', () => {
  let server: PrivateNatsServer;
  let gateway: GatewayHarness;
  // The bus logs its connection state as it changes it: waiting for these lines waits for the
  // state enqueue() consults, not for a guess of how long noticing takes.
  const busLog: string[] = [];
  const busLogger: BusLogger = {
    info: (_fields, message) => busLog.push(message),
    warn: (_fields, message) => busLog.push(message),
    error: (_fields, message) => busLog.push(message),
  };

  beforeAll(async () => {
    server = await PrivateNatsServer.start();
    const store = createPgliteStore();
    await store.migrate();
    const bus = await createNatsBus({
      servers: server.url,
      name: 'chunklog-gateway-outage-test',
      reconnectWaitMs: 200,
      jetStreamTimeoutMs: JET_STREAM_TIMEOUT_MS,
      logger: busLogger,
    });
    const backend: Backend = {
      store,
      bus,
      async cleanup() {
        await bus.close();
        await store.close();
      },
    };
    gateway = await startGateway({ name: 'pglite+private nats', create: async () => backend });
  });

  afterAll(async () => {
    await gateway?.close();
    await server?.dispose();
  });

  function post(tabId: string, text: string): Promise<JsonResponse> {
    return gateway.request('POST', `/v1/tabs/${tabId}/messages`, {
      body: { text },
      headers: { 'idempotency-key': text },
    });
  }

  it('answers 503 at once, stores nothing, and accepts again once NATS is back', async () => {
    const tabId = await gateway.createTab();
    expect((await post(tabId, 'before')).status).toBe(202);

    await server.kill();
    await waitFor(() => busLog.includes('NATS disconnected; reconnecting'), 'the bus saw it');
    const started = performance.now();
    const during = await post(tabId, 'during');
    const elapsedMs = performance.now() - started;
    expect(during.status).toBe(503);
    expect(during.body).toEqual(expectedError('unavailable'));
    // Without failing fast this takes the whole JetStream timeout (10 s); 3 s is generous for a
    // loaded machine and still says the bus did not wait on the broker.
    expect(elapsedMs).toBeLessThan(3_000);

    await server.restart();
    await waitFor(() => busLog.includes('NATS reconnected'), 'the bus reconnected');
    // JetStream may still be loading its streams just after the restart: retry with the same
    // Idempotency-Key (one stored item whatever happens) until it is accepted. Paced: a 503 now
    // comes back in a millisecond, and an unpaced loop would run into the per-key rate limit
    // (a 429) if JetStream took a few seconds on a loaded machine.
    let after = await post(tabId, 'after');
    const deadline = Date.now() + 30_000;
    while (after.status === 503 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await post(tabId, 'after');
    }
    expect(after.status).toBe(202);

    // The queue is first in, first out: had the refused message been stored, it would come
    // between the two accepted ones.
    const texts: string[] = [];
    const consumer = await gateway.backend.bus.consume(INTAKE_QUEUE, async (item) => {
      texts.push((item.data as MessageCommand).text);
      await item.ack();
    });
    await waitFor(() => texts.includes('after'), 'the accepted messages are consumed');
    await consumer.stop();
    expect(texts).toEqual(['before', 'after']);
  });
});
