import type { McpHttpServer, TabConfig } from '@chunklog/chunk-core';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMcpToolbox } from './mcp-toolbox';

const server = (name: string, url: string): McpHttpServer => ({ name, transport: 'http', url });
const logger = pino({ level: 'silent' });
const ofAlpha = (config: TabConfig) => ({ config, tenant: 'alpha' });
const toolContext = { signal: new AbortController().signal } as never;

describe('createMcpToolbox', () => {
  it("uses the deployment's servers, then the tab's, a tab's server replacing one of its name", async () => {
    const toolbox = createMcpToolbox({
      logger,
      servers: [server('a', 'http://deploy/a'), server('b', 'http://deploy/b')],
    });
    const [deployA, deployB] = toolbox.toolSets(ofAlpha({}));
    const sets = toolbox.toolSets(
      ofAlpha({ mcpServers: [server('c', 'http://tab/c'), server('a', 'http://tab/a')] }),
    );
    expect(sets).toHaveLength(3);
    expect(sets[0]).toBe(deployB);
    expect(sets[2]).not.toBe(deployA);
    // One connection per distinct definition, shared by a tenant's tabs naming a server alike.
    expect(toolbox.toolSets(ofAlpha({ mcpServers: [server('c', 'http://tab/c')] }))).toEqual([
      deployA,
      deployB,
      sets[1],
    ]);
    await toolbox.close();
  });

  it("keeps two tenants' sessions of the same server apart, and shares the deployment's", async () => {
    const toolbox = createMcpToolbox({ logger, servers: [server('a', 'http://deploy/a')] });
    const config = { mcpServers: [server('c', 'http://tab/c')] };
    const [alphaDeploy, alphaOwn] = toolbox.toolSets({ config, tenant: 'alpha' });
    const [betaDeploy, betaOwn] = toolbox.toolSets({ config, tenant: 'beta' });
    expect(betaDeploy).toBe(alphaDeploy);
    expect(betaOwn).not.toBe(alphaOwn);
    expect(toolbox.toolSets({ config, tenant: 'beta' })[1]).toBe(betaOwn);
    await toolbox.close();
  });

  it("leaves out a tab's own servers when its tenant is unknown", async () => {
    const toolbox = createMcpToolbox({ logger, servers: [server('a', 'http://deploy/a')] });
    const sets = toolbox.toolSets({
      config: { mcpServers: [server('c', 'http://tab/c')] },
      tenant: null,
    });
    expect(sets).toHaveLength(1);
    await toolbox.close();
  });

  it('leaves out the servers of a tab on hosts MCP_TAB_HOSTS does not allow', async () => {
    const toolbox = createMcpToolbox({ logger, tabHosts: ['*.example.com'] });
    const sets = toolbox.toolSets(
      ofAlpha({
        mcpServers: [
          server('in', 'https://mcp.example.com/mcp'),
          server('out', 'http://10.0.0.1/'),
        ],
      }),
    );
    expect(sets).toHaveLength(1);
    await toolbox.close();
  });

  it('answers every call to a server naming a secret its tenant may not use with the reason', async () => {
    const toolbox = createMcpToolbox({
      logger,
      environment: { MCP_SECRET_TOKEN: 'value', MCP_SECRET_TOKEN_TENANTS: 'alpha' },
    });
    const config = {
      mcpServers: [
        { ...server('kit', 'http://tab/kit'), headers: { A: { secret: 'MCP_SECRET_TOKEN' } } },
      ],
    };
    const [refused] = toolbox.toolSets({ config, tenant: 'beta' });
    expect(refused!.describe()).toEqual([]);
    expect(refused!.has('kit_echo')).toBe(true);
    expect(refused!.has('other_echo')).toBe(false);
    expect(await refused!.run('kit_echo', {}, toolContext)).toEqual({
      isError: true,
      result: expect.stringMatching(
        /^MCP server kit is not used for this tab: secret MCP_SECRET_TOKEN is not for tenant beta/,
      ),
    });
    const [allowed] = toolbox.toolSets({ config, tenant: 'alpha' });
    expect(allowed!.has('kit_echo')).toBe(false);
    await toolbox.close();
  });
});
