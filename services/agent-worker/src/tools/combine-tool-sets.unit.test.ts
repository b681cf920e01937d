import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { combineToolSets } from './combine-tool-sets';
import { createToolRegistry, defineTool, type ToolDefinition } from './tool-registry';

const tool = (name: string, answer: string) =>
  defineTool({
    name,
    description: `${name} tool`,
    inputSchema: z.object({}),
    run: async () => answer,
  }) as ToolDefinition<unknown>;

const context = { tabId: 't', turnId: 'u', callId: 'c', signal: new AbortController().signal };

describe('combineToolSets', () => {
  it('describes the sets in order, and a name held twice belongs to the first set', async () => {
    const first = createToolRegistry([tool('a', 'first a'), tool('b', 'first b')]);
    const second = createToolRegistry([tool('b', 'second b'), tool('c', 'second c')]);
    const combined = combineToolSets([first, second]);
    expect(combined.describe().map((described) => described.name)).toEqual(['a', 'b', 'c']);
    expect(combined.describe(['c', 'a']).map((described) => described.name)).toEqual(['a', 'c']);
    expect(combined.names()).toEqual(['a', 'b', 'c']);
    expect(await combined.run('b', {}, context)).toEqual({ result: 'first b', isError: false });
    expect(await combined.run('c', {}, context)).toEqual({ result: 'second c', isError: false });
    expect(await combined.run('d', {}, context)).toEqual({
      result: 'Unknown tool: d',
      isError: true,
    });
  });

  it('sees a set change after it was combined', () => {
    const later = createToolRegistry();
    const combined = combineToolSets([createToolRegistry([tool('a', 'a')]), later]);
    later.add(tool('z', 'z'));
    expect(combined.has('z')).toBe(true);
    expect(combined.describe().map((described) => described.name)).toEqual(['a', 'z']);
  });
});
