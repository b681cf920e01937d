import { testNatsUrl, testSubjectPrefix } from '@chunklog/test-infra';
import { jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { busContract } from '../testing/bus-contract';
import { busTraceContextContract } from '../testing/trace-context-contract';
import { createNatsBus } from './create-nats-bus';

const natsUrl = await testNatsUrl();
const subjectPrefix = testSubjectPrefix();

// Expected failures (a handler that throws on purpose) would only clutter the test output.
const quietLogger = pino({ level: 'silent' });

/** Deletes every stream this file created (their names start with the prefix). */
async function deleteStreams(url: string): Promise<void> {
  const connection = await connect({ servers: url });
  try {
    const manager = await jetstreamManager(connection);
    for await (const name of manager.streams.names()) {
      if (name.startsWith(`${subjectPrefix}_`)) await manager.streams.delete(name);
    }
  } finally {
    await connection.close();
  }
}

if (natsUrl === null) {
  console.warn('!!! SKIPPED: the NATS bus contract suite (no NATS server reachable)');
} else {
  afterAll(() => deleteStreams(natsUrl));
  const createBus = () =>
    createNatsBus({
      servers: natsUrl,
      subjectPrefix,
      name: 'chunklog-bus-test',
      logger: quietLogger,
    });
  // Every party gets its own connection, as a gateway and a worker would.
  busContract('NATS', { createBus, createPeer: () => createBus() });
  busTraceContextContract('NATS', { createBus, createPeer: () => createBus() });

  describe('NATS bus provisioning', () => {
    it('lets processes starting together all create a new queue, each on its own connection', async () => {
      for (let round = 0; round < 5; round += 1) {
        const queue = `race-${round}`;
        const buses = await Promise.all(Array.from({ length: 6 }, () => createBus()));
        try {
          const outcomes = await Promise.allSettled(
            buses.map((bus, index) => bus.enqueue(queue, { index }, { msgId: `race-${index}` })),
          );
          expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
        } finally {
          await Promise.all(buses.map((bus) => bus.close()));
        }
      }
    });

    it('enqueues to a queue whose stream exists but listens on its subject only a moment later', async () => {
      // As when another process has just created the stream: the server already answers for it,
      // but publishes to its subject find no responder yet.
      const queue = 'late-listener';
      const stream = `${subjectPrefix}_${queue}`;
      const connection = await connect({ servers: natsUrl });
      const manager = await jetstreamManager(connection);
      const bus = await createBus();
      try {
        await manager.streams.add({
          name: stream,
          subjects: [`${subjectPrefix}.not-yet.${queue}`],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
        });
        const enqueued = bus.enqueue(queue, { late: true }, { msgId: 'late-1' });
        await new Promise((resolve) => setTimeout(resolve, 60));
        await manager.streams.update(stream, {
          subjects: [`${subjectPrefix}.chunklog.queue.${queue}`],
        });
        await enqueued;
        expect((await manager.streams.info(stream)).state.messages).toBe(1);
      } finally {
        await bus.close();
        await connection.close();
      }
    });
  });
}
