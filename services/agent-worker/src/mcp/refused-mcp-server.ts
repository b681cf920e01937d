import type { ToolSet } from '../tools/tool-registry';

/**
 * A tab's MCP server the worker will not connect to (a secret its tenant may not use): no tools
 * are offered, and a call to any `<server>_…` tool answers `why` as an error result, so the
 * model and the log say what is wrong instead of "Unknown tool".
 */
export function refusedMcpServer(serverName: string, why: string): ToolSet {
  const prefix = `${serverName}_`;
  return {
    names: () => [],
    has: (name) => name.startsWith(prefix),
    describe: () => [],
    run: async () => ({ result: why, isError: true }),
  };
}
