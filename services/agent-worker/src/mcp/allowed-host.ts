/**
 * Whether a tab may name an MCP server at `url`, given the deployment's host patterns
 * (MCP_TAB_HOSTS): `*` allows any host, `*.example.com` any host under example.com, and any
 * other pattern that host exactly (case-insensitive; the port is not part of it).
 */
export function isAllowedHost(url: string, patterns: readonly string[]): boolean {
  const host = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return patterns.some((raw) => {
    const pattern = raw.trim().toLowerCase();
    if (pattern === '*') return true;
    if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1));
    return host === pattern.replace(/^\[|\]$/g, '');
  });
}
