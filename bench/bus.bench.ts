/**
 * Bus latency on the local NATS server (NATS_URL or nats://127.0.0.1:4222):
 * - nats.pub_to_sub.*: raw NATS publish → subscriber receive, two connections, 2,000 samples,
 *   the floor the gateway's event relay compares itself with;
 * - bus.nats.enqueue_to_handler.*: the JetStream work queue, enqueue() → consume handler.
 */
import { randomUUID } from 'node:crypto';
import { createNatsBus, natsLatency } from '@chunklog/bus';
import { createLogger } from '@chunklog/runtime';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { percentile } from './percentile';

const servers = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

async function workQueueLatency(samples: number): Promise<number[]> {
  const prefix = `bench${randomUUID().replaceAll('-', '').slice(0, 8)}`;
  const bus = await createNatsBus({
    servers,
    subjectPrefix: prefix,
    logger: createLogger({ level: 'silent' }),
  });
  const durations: number[] = [];
  try {
    let arrived: (() => void) | undefined;
    const subscription = await bus.consume('latency', async (item) => {
      await item.ack();
      arrived?.();
    });
    for (let index = 0; index < samples + 20; index++) {
      const received = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const start = process.hrtime.bigint();
      await bus.enqueue('latency', { index }, { msgId: `m${index}` });
      await received;
      if (index >= 20) durations.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    await subscription.stop();
  } finally {
    await bus.close();
    const connection = await connect({ servers });
    const manager = await jetstreamManager(connection);
    await manager.streams.delete(`${prefix}_latency`).catch(() => undefined);
    await connection.close();
  }
  return durations.sort((a, b) => a - b);
}

export default async function busBench(): Promise<Record<string, number>> {
  const raw = await natsLatency({ servers, samples: 2_000 });
  const queue = await workQueueLatency(300);
  return {
    'nats.pub_to_sub.p50_ms': raw.p50Ms,
    'nats.pub_to_sub.p99_ms': raw.p99Ms,
    'bus.nats.enqueue_to_handler.p50_ms': percentile(queue, 0.5),
    'bus.nats.enqueue_to_handler.p99_ms': percentile(queue, 0.99),
  };
}
