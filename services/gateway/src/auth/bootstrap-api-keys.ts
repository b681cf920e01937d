import type { TenantStore } from '@chunklog/store';
import { parseApiKeys } from '../config/gateway-config';

/** Creates the tenants and keys of an API_KEYS value; idempotent, so every start may run it. */
export async function bootstrapApiKeys(
  store: Pick<TenantStore, 'createTenant' | 'addApiKey'>,
  apiKeys: string | undefined,
): Promise<void> {
  for (const { tenant, key } of parseApiKeys(apiKeys)) {
    const created = await store.createTenant({ name: tenant });
    await store.addApiKey(created.id, key);
  }
}
