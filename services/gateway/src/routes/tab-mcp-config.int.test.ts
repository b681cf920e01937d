import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedError } from '../testing/expected-error';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { realBackend } from '../testing/test-backends';

const backend = await realBackend();

const docs = {
  name: 'docs',
  transport: 'http',
  url: 'https://mcp.example.com/mcp',
  headers: { Authorization: { secret: 'MCP_SECRET_DOCS_TOKEN' } },
};

describe.skipIf(!backend)('POST /v1/tabs with MCP servers in the config', () => {
  let gateway: GatewayHarness;
  beforeAll(async () => {
    gateway = await startGateway(backend!, {
      // tenant-a may use the docs token on its server; tenant-b may not use it at all.
      mcpSecretScopes: {
        MCP_SECRET_DOCS_TOKEN_TENANTS: 'tenant-a',
        MCP_SECRET_DOCS_TOKEN_ORIGINS: 'https://mcp.example.com',
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function tabCount(key?: string): Promise<number> {
    const response = await gateway.request('GET', '/v1/tabs?limit=500', { key });
    return (response.body as { tabs: unknown[] }).tabs.length;
  }

  it('creates a tab naming a Streamable HTTP server with secret references, and reads it back', async () => {
    const created = await gateway.request('POST', '/v1/tabs', {
      body: { config: { mcpServers: [docs] } },
    });
    expect(created.status).toBe(201);
    const { tab } = created.body as { tab: { id: string } };
    const read = await gateway.request('GET', `/v1/tabs/${tab.id}`);
    expect(read.body).toMatchObject({ tab: { config: { mcpServers: [docs] } } });
  });

  it.each([
    ['a stdio server', { name: 'shell', transport: 'stdio', command: 'sh' }, /only "http"/],
    ['a header in clear', { ...docs, headers: { Authorization: 'Bearer abc' } }, /Authorization/],
    [
      'a secret outside MCP_SECRET_*',
      { ...docs, headers: { Authorization: { secret: 'DATABASE_URL' } } },
      /MCP_SECRET_/,
    ],
    ['a URL that is not http(s)', { ...docs, url: 'file:///etc/passwd' }, /url/],
    ['a name with an underscore', { ...docs, name: 'my_docs' }, /name/],
  ])('refuses %s with 400, storing nothing', async (_case, server, message) => {
    const before = await tabCount();
    const response = await gateway.request('POST', '/v1/tabs', {
      body: { config: { mcpServers: [server] } },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(expectedError(expect.any(String)));
    expect((response.body as { error: { message: string } }).error.message).toMatch(message);
    expect(await tabCount()).toBe(before);
  });

  it('refuses with 400 a secret its tenant is not listed for, storing nothing', async () => {
    const key = gateway.tenantB.key;
    const before = await tabCount(key);
    const response = await gateway.request('POST', '/v1/tabs', {
      key,
      body: { config: { mcpServers: [docs] } },
    });
    expect(response.status).toBe(400);
    expect((response.body as { error: { message: string } }).error.message).toMatch(
      /MCP server docs: secret MCP_SECRET_DOCS_TOKEN is not for tenant tenant-b \(MCP_SECRET_DOCS_TOKEN_TENANTS\)/,
    );
    expect(await tabCount(key)).toBe(before);
  });

  it('refuses with 400 a secret with no tenant list, and one sent to another origin', async () => {
    const unlisted = await gateway.request('POST', '/v1/tabs', {
      body: {
        config: {
          mcpServers: [{ ...docs, headers: { Authorization: { secret: 'MCP_SECRET_OTHER' } } }],
        },
      },
    });
    expect(unlisted.status).toBe(400);
    expect((unlisted.body as { error: { message: string } }).error.message).toMatch(
      /MCP_SECRET_OTHER is not for tenant tenant-a: MCP_SECRET_OTHER_TENANTS is not set/,
    );
    const elsewhere = await gateway.request('POST', '/v1/tabs', {
      body: { config: { mcpServers: [{ ...docs, url: 'https://attacker.example.net/mcp' }] } },
    });
    expect(elsewhere.status).toBe(400);
    expect((elsewhere.body as { error: { message: string } }).error.message).toMatch(
      /may not be sent to https:\/\/attacker\.example\.net/,
    );
  });

  it('refuses a secret with no tenant list to a tenant named local too, naming the variable', async () => {
    const local = await gateway.backend.store.createTenant({ name: 'local' });
    const key = `ck_local_${crypto.randomUUID()}`;
    await gateway.backend.store.addApiKey(local.id, key);
    const response = await gateway.request('POST', '/v1/tabs', {
      key,
      body: {
        config: {
          mcpServers: [{ ...docs, headers: { Authorization: { secret: 'MCP_SECRET_OTHER' } } }],
        },
      },
    });
    expect(response.status).toBe(400);
    expect((response.body as { error: { message: string } }).error.message).toBe(
      'MCP server docs: secret MCP_SECRET_OTHER is not for tenant local: MCP_SECRET_OTHER_TENANTS is not set, and with auth a secret is only for the tenants it lists (set it to tenant names, or * for every tenant)',
    );
    expect(await tabCount(key)).toBe(0);
  });
});

describe.skipIf(!backend)('POST /v1/tabs with MCP secrets, auth off', () => {
  it('lets the one local tenant name a secret with no tenant list', async () => {
    const gateway = await startGateway(backend!, { auth: { mode: 'off' }, mcpSecretScopes: {} });
    try {
      const created = await gateway.request('POST', '/v1/tabs', {
        key: null,
        body: { config: { mcpServers: [docs] } },
      });
      expect(created.status).toBe(201);
    } finally {
      await gateway.close();
    }
  });
});
