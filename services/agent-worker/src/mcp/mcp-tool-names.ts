import { createHash } from 'node:crypto';

const API_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The name the model sees for an MCP server's tool: `<server>_<tool>` when that is a valid API
 * name. Otherwise the invalid characters become `_`, the name is cut to fit, and a hash of the
 * tool's own name is appended, so two tools that clean up alike still differ. The name depends
 * on the server's name and the tool's only (not on the other tools listed), so it stays the
 * same, and so do the request's bytes, as a server's list changes around it.
 */
export function mcpToolName(server: string, tool: string): string {
  const plain = `${server}_${tool}`;
  if (API_TOOL_NAME.test(plain)) return plain;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${plain.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64 - 9)}_${hash}`;
}

/**
 * Public names for one server's tools, as `[public, original]` pairs sorted by public name.
 * A tool whose public name another already has (a duplicate in the list, or a hash collision)
 * is left out; of the two the one with the smaller original name stays, whatever the order
 * the server listed them in.
 */
export function mcpToolNames(
  server: string,
  tools: readonly string[],
): { named: [string, string][]; dropped: string[] } {
  const byName = new Map<string, string>();
  const dropped: string[] = [];
  for (const tool of [...new Set(tools)].sort()) {
    const name = mcpToolName(server, tool);
    if (byName.has(name)) dropped.push(tool);
    else byName.set(name, tool);
  }
  const named = [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { named, dropped };
}
