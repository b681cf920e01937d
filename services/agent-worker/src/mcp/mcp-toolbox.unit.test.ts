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

  it("keeps two tenants' sessions of the same server apart, the deployment's too", async () => {
    const toolbox = createMcpToolbox({ logger, servers: [server('a', 'http://deploy/a')] });
    const config = { mcpServers: [server('c', 'http://tab/c')] };
    const [listing] = toolbox.toolSets({ config: {}, tenant: null });
    // Before a tenant's session is open, the deployment's own listing describes the server.
    const [alphaListing, alphaOwn] = toolbox.toolSets({ config, tenant: 'alpha' });
    expect(alphaListing).toBe(listing);
    const aborted = AbortSignal.abort();
    await toolbox.prepare({ config, tenant: 'alpha' }, aborted);
    await toolbox.prepare({ config, tenant: 'beta' }, aborted);
    const [alphaDeploy, alphaOwnPrepared] = toolbox.toolSets({ config, tenant: 'alpha' });
    const [betaDeploy, betaOwn] = toolbox.toolSets({ config, tenant: 'beta' });
    expect(alphaOwnPrepared).toBe(alphaOwn);
    expect(alphaDeploy).not.toBe(listing);
    expect(betaDeploy).not.toBe(listing);
    expect(betaDeploy).not.toBe(alphaDeploy);
    expect(betaOwn).not.toBe(alphaOwn);
    // A tenant's tabs share its sessions.
    expect(toolbox.toolSets({ config: {}, tenant: 'beta' })).toEqual([betaDeploy]);
    expect(toolbox.toolSets({ config, tenant: 'beta' })[1]).toBe(betaOwn);
    expect(toolbox.toolSets({ config: {}, tenant: null })).toEqual([listing]);
    await toolbox.close();
  });

  it('tells whether a tab needs its tenant: it or the deployment has servers', async () => {
    const bare = createMcpToolbox({ logger });
    expect(bare.usesTenant({})).toBe(false);
    expect(bare.usesTenant({ mcpServers: [server('c', 'http://tab/c')] })).toBe(true);
    const deployed = createMcpToolbox({ logger, servers: [server('a', 'http://deploy/a')] });
    expect(deployed.usesTenant({})).toBe(true);
    await Promise.all([bare.close(), deployed.close()]);
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

  it('lets a secret with no tenant list go only to the tenant unlistedSecretsTenant names', async () => {
    const environment = { MCP_SECRET_TOKEN: 'value' };
    const config = {
      mcpServers: [
        { ...server('kit', 'http://tab/kit'), headers: { A: { secret: 'MCP_SECRET_TOKEN' } } },
      ],
    };
    const refusal = async (toolbox: ReturnType<typeof createMcpToolbox>, tenant: string) => {
      const [set] = toolbox.toolSets({ config, tenant });
      if (!set!.has('kit_echo')) return null;
      return (await set!.run('kit_echo', {}, toolContext)).result;
    };
    // Without auth: the one local tenant may use it, another may not.
    const authOff = createMcpToolbox({ logger, environment, unlistedSecretsTenant: 'local' });
    expect(await refusal(authOff, 'local')).toBeNull();
    expect(await refusal(authOff, 'beta')).toMatch(
      /secret MCP_SECRET_TOKEN is not for tenant beta: without MCP_SECRET_TOKEN_TENANTS it is for tenant local only/,
    );
    // With auth (the default): no tenant may, one named local neither.
    const authOn = createMcpToolbox({ logger, environment });
    expect(await refusal(authOn, 'local')).toMatch(
      /secret MCP_SECRET_TOKEN is not for tenant local: MCP_SECRET_TOKEN_TENANTS is not set/,
    );
    await Promise.all([authOff.close(), authOn.close()]);
  });
});
