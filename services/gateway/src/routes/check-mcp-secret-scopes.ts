import { InvalidInputError, serverSecretRefusals, type TabConfig } from '@chunklog/chunk-core';
import type { TenantStore } from '@chunklog/store';

/**
 * Refuses (400) a tab config whose MCP servers name a secret the tenant may not use, or send
 * one to an origin it is not for (chunk-core's secretRefusal). The worker checks again at
 * every turn, with its own environment: this only makes the mistake visible at once.
 */
export async function checkMcpSecretScopes(input: {
  store: Pick<TenantStore, 'tenantName'>;
  tenantId: string;
  config: TabConfig | undefined;
  scopes: Readonly<Record<string, string | undefined>>;
  /** The tenant that may use a secret without a tenant list: auth off's own; null with auth. */
  unlistedSecretsTenant: string | null;
}): Promise<void> {
  const servers = input.config?.mcpServers ?? [];
  if (!servers.some((server) => Object.keys(server.headers ?? {}).length > 0)) return;
  const tenantName = (await input.store.tenantName(input.tenantId)) ?? input.tenantId;
  const refusals = servers.flatMap((server) =>
    serverSecretRefusals(server, {
      tenantName,
      environment: input.scopes,
      unlistedSecretsTenant: input.unlistedSecretsTenant,
    }).map((refusal) => `MCP server ${server.name}: ${refusal}`),
  );
  if (refusals.length > 0) throw new InvalidInputError(refusals.join('; '));
}
