/**
 * Deep tabs for browser tests and the web bench, written through the store API into a data
 * folder before the product opens it (turns would take hours to make 100,000 chunks).
 */
import { randomUUID } from 'node:crypto';
import type { NewChunk } from '@chunklog/chunk-core';
import { LOCAL_TENANT_ID } from '@chunklog/gateway';
import { createPgliteStore, maxChunksPerAppend } from '@chunklog/store';

/** The text of seeded chunk `seq`: short, and naming its seq so a test can read it back. */
export const seededText = (seq: number) =>
  seq % 2 === 1 ? `Question ${seq}?` : `Answer ${seq}: the log keeps every chunk in order.`;

/**
 * Creates tabs in `dataDir` for the all-in-one's local tenant (auth off): one per entry of
 * `tabs`, each of turns of `turnLength` chunks: a user text, then assistant texts in steps of
 * four (a long agentic turn is many model steps). Returns the tab ids in the same order.
 */
export async function seedTabs(
  dataDir: string,
  tabs: { title: string; depth: number; turnLength?: number }[],
): Promise<string[]> {
  const store = createPgliteStore({ dataDir });
  try {
    await store.migrate();
    await store.createTenant({ name: 'local', id: LOCAL_TENANT_ID });
    const ids: string[] = [];
    for (const { title, depth, turnLength = 2 } of tabs) {
      const tab = await store.createTab({ tenantId: LOCAL_TENANT_ID, title });
      let turnId = randomUUID();
      for (let first = 1; first <= depth; first += maxChunksPerAppend) {
        const batch: NewChunk[] = [];
        for (let seq = first; seq < first + maxChunksPerAppend && seq <= depth; seq += 1) {
          const position = (seq - 1) % turnLength;
          if (position === 0) turnId = randomUUID();
          batch.push({
            id: randomUUID(),
            tabId: tab.id,
            turnId,
            step: Math.floor(position / 4),
            type: 'text',
            role: position === 0 ? 'user' : 'assistant',
            data: { text: seededText(seq) },
          });
        }
        await store.append(tab.id, batch, { expectedSeq: first });
      }
      ids.push(tab.id);
    }
    return ids;
  } finally {
    await store.close();
  }
}
