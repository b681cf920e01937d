import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';

/** Publish → subscriber-receive latency figures in milliseconds. */
export interface NatsLatency {
  samples: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

function percentile(sorted: number[], fraction: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/**
 * Measures raw NATS publish → subscriber receive on two separate connections, one message in
 * flight at a time, as the floor any relay through NATS (the gateway's SSE) compares itself with.
 */
export async function natsLatency(options: {
  servers: string | string[];
  samples?: number;
  payloadBytes?: number;
}): Promise<NatsLatency> {
  const samples = options.samples ?? 2_000;
  const subject = `chunklog.bench.latency.${randomUUID()}`;
  const publisher = await connect({ servers: options.servers, name: 'chunklog-latency-pub' });
  const subscriber = await connect({ servers: options.servers, name: 'chunklog-latency-sub' });
  try {
    let arrived: (() => void) | undefined;
    subscriber.subscribe(subject, { callback: () => arrived?.() });
    // Make sure the server knows the subscription before the first timed publish.
    await subscriber.flush();
    const payload = JSON.stringify({ text: 'x'.repeat(options.payloadBytes ?? 64) });
    const durations: number[] = [];
    for (let index = 0; index < samples + 50; index++) {
      const received = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const start = process.hrtime.bigint();
      publisher.publish(subject, payload);
      await received;
      const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
      // The first 50 round trips warm up the JIT and socket buffers; they are not measured.
      if (index >= 50) durations.push(elapsedMs);
    }
    durations.sort((a, b) => a - b);
    return {
      samples,
      p50Ms: percentile(durations, 0.5),
      p90Ms: percentile(durations, 0.9),
      p99Ms: percentile(durations, 0.99),
      maxMs: durations.at(-1) ?? Number.NaN,
    };
  } finally {
    await publisher.close();
    await subscriber.close();
  }
}
