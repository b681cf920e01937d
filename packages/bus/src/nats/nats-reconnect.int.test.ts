/**
 * Reconnect behaviour against a private nats-server child process (never the machine's shared
 * server, which other suites use): it is killed and restarted on the same port and store
 * directory while a bus is connected.
 */
import { rm } from 'node:fs/promises';
import {
  NATS_SERVER_BINARY,
  natsServerAvailable,
  PrivateNatsServer,
  sleep,
} from '@chunklog/test-infra';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '../bus';
import { waitUntil } from '../testing/wait-until';
import { createNatsBus } from './create-nats-bus';

const serverAvailable = natsServerAvailable();
if (!serverAvailable) {
  console.warn(
    `!!! SKIPPED: the NATS reconnect suite (no nats-server binary at ${NATS_SERVER_BINARY})`,
  );
}

const quietLogger = pino({ level: 'silent' });

async function waitForReady(bus: Bus, expected: boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await bus.ready()) !== expected) {
    if (Date.now() > deadline) throw new Error(`ready() did not become ${expected}`);
    await sleep(50);
  }
}

/** Consumes `queue` on `bus`, acking each item; returns the items' data as they arrive. */
async function consumeInto(bus: Bus, queue: string): Promise<unknown[]> {
  const received: unknown[] = [];
  await bus.consume(queue, async (item) => {
    received.push(item.data);
    await item.ack();
  });
  return received;
}

describe.skipIf(!serverAvailable)('NATS bus across a server restart', () => {
  let server: PrivateNatsServer;
  let bus: Bus;

  beforeAll(async () => {
    server = await PrivateNatsServer.start();
    bus = await createNatsBus({
      servers: `nats://127.0.0.1:${server.port}`,
      name: 'chunklog-reconnect-test',
      reconnectWaitMs: 200,
      logger: quietLogger,
    });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.dispose();
  });

  it('resumes a subscription and a consumer, and keeps a queued item, after a crash', async () => {
    const events: unknown[] = [];
    await bus.subscribe('chunklog.tab.*.evt.chunk-seal', (payload) => events.push(payload));
    const processed = await consumeInto(bus, 'intake');

    await bus.publish('chunklog.tab.a.evt.chunk-seal', 'before');
    await bus.enqueue('intake', 'job before', { msgId: 'before' });
    // Nobody consumes 'parked' yet: this item only lives in the server's file store.
    await bus.enqueue('parked', 'waiting through the crash', { msgId: 'parked-1' });
    await waitUntil(
      () => events.length === 1 && processed.length === 1,
      'the event and the job arrive',
    );

    await server.kill();
    await waitForReady(bus, false, 5_000);

    await server.restart();
    const restartedAt = Date.now();
    await waitForReady(bus, true, 10_000);
    const reconnectMs = Date.now() - restartedAt;

    await bus.publish('chunklog.tab.a.evt.chunk-seal', 'after');
    await waitUntil(() => events.length === 2, 'the subscription resumes', 5_000);
    expect(events).toEqual(['before', 'after']);

    await bus.enqueue('intake', 'job after', { msgId: 'after' });
    await waitUntil(() => processed.length === 2, 'the consumer resumes', 15_000);
    expect(processed).toEqual(['job before', 'job after']);
    console.info(
      `reconnected ${reconnectMs} ms after the restart; consumer resumed after ${Date.now() - restartedAt} ms`,
    );

    const parked = await consumeInto(bus, 'parked');
    await waitUntil(() => parked.length === 1, 'the queued item survives', 10_000);
    expect(parked).toEqual(['waiting through the crash']);
  });

  it('enqueues again after a restart that lost the stream, with no consumer to rebuild it', async () => {
    // A gateway enqueues but never consumes: nothing in its process would notice the lost
    // stream, so enqueue itself has to build it again.
    const gateway = await createNatsBus({
      servers: `nats://127.0.0.1:${server.port}`,
      name: 'chunklog-reconnect-gateway',
      reconnectWaitMs: 200,
      logger: quietLogger,
    });
    try {
      await gateway.enqueue('intake-lost', 'before the loss', { msgId: 'lost-1' });
      await server.kill();
      await rm(server.storeDirectory, { recursive: true, force: true });
      await server.restart();
      await waitForReady(gateway, true, 10_000);

      await gateway.enqueue('intake-lost', 'after the loss', { msgId: 'lost-2' });
      // The consuming side reconnects on its own schedule; starting a consumer needs it back.
      await waitForReady(bus, true, 10_000);
      const received = await consumeInto(bus, 'intake-lost');
      await waitUntil(() => received.length === 1, 'the item enqueued after the loss', 15_000);
      expect(received).toEqual(['after the loss']);
    } finally {
      await gateway.close();
    }
  });
});
