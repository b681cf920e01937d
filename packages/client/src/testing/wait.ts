import type { Chunk } from '@chunklog/chunk-core';
import { sleep } from '@chunklog/test-infra';
import type { ChunklogClient } from '../client';

/** Polls `check` until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The tab's whole stored log, read page by page. */
export async function readLog(client: ChunklogClient, tabId: string): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for (;;) {
    const page = await client.chunks(tabId, { after: chunks.at(-1)?.seq ?? 0, limit: 500 });
    chunks.push(...page.chunks);
    if (!page.hasMore) return chunks;
  }
}
