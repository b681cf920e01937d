import { randomUUID } from 'node:crypto';
import type { Bus } from '@chunklog/bus';
import { type Chunk, liveEventSubject } from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import { sleep } from '@chunklog/test-infra';
import { openSse } from './sse-client';

/** Times one seal at a time from its publish on the bus to its arrival at an SSE client. */
export interface SealProbe {
  /** Appends a chunk, publishes its seal as a worker would, and resolves with the ms to arrival. */
  sample(): Promise<number>;
  close(): void;
}

/** Opens an SSE client on `tabId` through the gateway at `baseUrl`. */
export async function openSealProbe(input: {
  baseUrl: string;
  key: string;
  tabId: string;
  store: ChunkStore;
  bus: Bus;
  /** Runs the publish (inside a span, say); default: as is. */
  around?: (publish: () => Promise<void>) => Promise<void>;
}): Promise<SealProbe> {
  const { tabId, store, bus } = input;
  const around = input.around ?? ((publish) => publish());
  const turnId = randomUUID();
  let arrived: ((seq: number) => void) | undefined;
  const connection = await openSse(
    `${input.baseUrl}/v1/tabs/${tabId}/events`,
    input.key,
    (block) => {
      const id = /^id: (\d+)$/m.exec(block);
      if (id) arrived?.(Number(id[1]));
    },
  );
  await sleep(200);
  let index = 0;
  return {
    async sample() {
      const [chunk] = (await store.append(tabId, [
        {
          id: randomUUID(),
          tabId,
          turnId,
          step: 0,
          role: 'assistant',
          type: 'text',
          data: { text: `sealed block number ${index++}` },
        },
      ])) as [Chunk];
      const received = new Promise<void>((resolve) => {
        arrived = (seq) => {
          if (seq === chunk.seq) resolve();
        };
      });
      const started = performance.now();
      await around(() => bus.publish(liveEventSubject(tabId, 'chunk-seal'), { tabId, chunk }));
      await received;
      return performance.now() - started;
    },
    close: () => connection.close(),
  };
}
