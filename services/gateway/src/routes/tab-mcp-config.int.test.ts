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
    gateway = await startGateway(backend!);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function tabCount(): Promise<number> {
    const response = await gateway.request('GET', '/v1/tabs?limit=500');
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
});
