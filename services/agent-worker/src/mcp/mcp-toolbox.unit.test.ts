import type { McpHttpServer } from '@chunklog/chunk-core';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMcpToolbox } from './mcp-toolbox';

const server = (name: string, url: string): McpHttpServer => ({ name, transport: 'http', url });
const logger = pino({ level: 'silent' });

describe('createMcpToolbox', () => {
  it("uses the deployment's servers, then the tab's, a tab's server replacing one of its name", async () => {
    const toolbox = createMcpToolbox({
      logger,
      servers: [server('a', 'http://deploy/a'), server('b', 'http://deploy/b')],
    });
    const [deployA, deployB] = toolbox.toolSets({});
    const sets = toolbox.toolSets({
      mcpServers: [server('c', 'http://tab/c'), server('a', 'http://tab/a')],
    });
    expect(sets).toHaveLength(3);
    expect(sets[0]).toBe(deployB);
    expect(sets[2]).not.toBe(deployA);
    // One connection per distinct definition, shared by the tabs naming a server alike.
    expect(toolbox.toolSets({ mcpServers: [server('c', 'http://tab/c')] })).toEqual([
      deployA,
      deployB,
      sets[1],
    ]);
    await toolbox.close();
  });

  it('leaves out the servers of a tab on hosts MCP_TAB_HOSTS does not allow', async () => {
    const toolbox = createMcpToolbox({ logger, tabHosts: ['*.example.com'] });
    const sets = toolbox.toolSets({
      mcpServers: [server('in', 'https://mcp.example.com/mcp'), server('out', 'http://10.0.0.1/')],
    });
    expect(sets).toHaveLength(1);
    await toolbox.close();
  });
});
