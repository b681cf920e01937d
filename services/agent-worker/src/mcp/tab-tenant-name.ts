import type { ChunkStore } from '@chunklog/store';

/** The name of a tab's tenant (what an MCP secret's tenant list names), or null. */
export async function tabTenantName(
  store: Pick<ChunkStore, 'tabTenant' | 'tenantName'>,
  tabId: string,
): Promise<string | null> {
  const tenantId = await store.tabTenant(tabId);
  return tenantId === null ? null : store.tenantName(tenantId);
}
