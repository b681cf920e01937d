import type { TabConfig } from '@chunklog/chunk-core';
import type { McpToolbox } from '../mcp/mcp-toolbox';
import { combineToolSets } from './combine-tool-sets';
import type { ToolSet } from './tool-registry';

/**
 * The tools of a tab's turn, offered and run: the worker's own, then (with `mcp`) the tab's MCP
 * servers', less the names in `exclude` (a subagent's own `task`), which are neither described
 * nor run. The turn loop and the worker's `/context` options both build their tools here.
 */
export function tabToolSet(input: {
  tools: ToolSet;
  mcp?: McpToolbox;
  config: TabConfig;
  /** The tab's tenant's name, for its MCP servers' secrets and sessions (null: none of its own). */
  tenant: string | null;
  exclude?: readonly string[];
}): ToolSet {
  const { mcp, config, tenant } = input;
  const all = mcp
    ? combineToolSets([input.tools, ...mcp.toolSets({ config, tenant })])
    : input.tools;
  return input.exclude?.length ? withholding(all, input.exclude) : all;
}

function withholding(set: ToolSet, exclude: readonly string[]): ToolSet {
  const kept = (name: string) => !exclude.includes(name);
  return {
    names: () => set.names().filter(kept),
    has: (name) => kept(name) && set.has(name),
    describe: (only) => set.describe(only).filter((tool) => kept(tool.name)),
    run: (name, input, context) =>
      kept(name)
        ? set.run(name, input, context)
        : Promise.resolve({ result: `Unknown tool: ${name}`, isError: true }),
  };
}
