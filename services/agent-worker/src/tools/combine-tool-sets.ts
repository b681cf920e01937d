import type { ToolSet } from './tool-registry';

/**
 * Several tool sets seen as one: described in the order of the sets, then of each set's own
 * order (stable bytes for the prompt cache), and a name held by two sets belongs to the first.
 * The sets are read at every call, so a set that changes (an MCP server's refreshed list) is
 * seen at once.
 */
export function combineToolSets(sets: readonly ToolSet[]): ToolSet {
  if (sets.length === 1) return sets[0]!;
  const owner = (name: string) => sets.find((set) => set.has(name));
  return {
    names() {
      const names = new Set<string>();
      for (const set of sets) for (const name of set.names()) names.add(name);
      return [...names];
    },
    has: (name) => owner(name) !== undefined,
    describe(only) {
      const seen = new Set<string>();
      return sets.flatMap((set) =>
        set.describe(only).filter((tool) => {
          if (seen.has(tool.name)) return false;
          seen.add(tool.name);
          return true;
        }),
      );
    },
    async run(name, input, context) {
      const set = owner(name);
      if (!set) return { result: `Unknown tool: ${name}`, isError: true };
      return set.run(name, input, context);
    },
  };
}
