import type { ChunkStore } from '@chunklog/store';

/** Creates the tenants and keys of an `API_KEYS` value (`tenant:key,tenant:key`); idempotent. */
export async function bootstrapApiKeys(store: ChunkStore, apiKeys: string): Promise<void> {
  for (const pair of apiKeys
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const separator = pair.indexOf(':');
    if (separator <= 0 || separator === pair.length - 1) {
      throw new Error(`API_KEYS entry "${pair}" is not tenant:key`);
    }
    const tenant = await store.createTenant({ name: pair.slice(0, separator) });
    await store.addApiKey(tenant.id, pair.slice(separator + 1));
  }
}
