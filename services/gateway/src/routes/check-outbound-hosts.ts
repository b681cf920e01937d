import { InvalidInputError, type TabConfig } from '@chunklog/chunk-core';
import { isRefusedHost, type OutboundAllowlist } from '@chunklog/runtime/outbound-address';

/**
 * Refuses (400) what the workers would never connect to, plainly visible in a URL: an address
 * that is not public (private, loopback, link-local, carrier-grade NAT, unique-local, multicast,
 * reserved, or an IPv6 form of one) or `localhost`, unless the allowlist opens it. A host name is
 * judged by the addresses it resolves to when the worker sends, not here: the answer may differ
 * by then, and from the gateway's network.
 */
function refusedUrl(url: string, allowlist: OutboundAllowlist): boolean {
  return isRefusedHost(new URL(url).hostname, allowlist);
}

/** A webhook endpoint's URL (`body.url`), against WEBHOOK_ALLOWED_HOSTS. */
export function checkWebhookUrl(url: string, allowlist: OutboundAllowlist): void {
  if (!refusedUrl(url, allowlist)) return;
  throw new InvalidInputError(
    "body: /url the endpoint's address is not allowed: not a public address (WEBHOOK_ALLOWED_HOSTS can open it)",
  );
}

/** A tab's MCP servers' URLs (`body.config.mcpServers[i].url`), against MCP_TAB_HOSTS. */
export function checkMcpServerUrls(
  config: TabConfig | undefined,
  allowlist: OutboundAllowlist,
): void {
  const refusals = (config?.mcpServers ?? []).flatMap((server, index) =>
    refusedUrl(server.url, allowlist)
      ? [
          `/config/mcpServers/${index}/url MCP server ${server.name}'s address is not allowed: not a public address (MCP_TAB_HOSTS can name it)`,
        ]
      : [],
  );
  if (refusals.length > 0) throw new InvalidInputError(`body: ${refusals.join('; ')}`);
}
