/**
 * The gateway refuses at once a webhook endpoint or a tab's MCP server whose URL holds an
 * address the workers would never connect to (the workers check every address again when they
 * send): 400, the field named, nothing stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedError } from '../testing/expected-error';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { realBackend } from '../testing/test-backends';

const backend = await realBackend();

/** The worker's network, in the spellings a tenant could try. */
const refusedUrls = [
  'http://169.254.169.254/latest/meta-data/',
  'http://127.0.0.1:8080/hook',
  'http://10.0.0.1/hook',
  'http://172.16.5.4/hook',
  'http://192.168.0.10/hook',
  'http://100.64.0.1/hook',
  'http://0.0.0.0:8080/hook',
  'http://[::]/hook',
  'http://[::1]:8080/hook',
  'http://[fe80::1]/hook',
  'http://[fd00::1]/hook',
  'http://224.0.0.1/hook',
  'http://255.255.255.255/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://[::ffff:7f00:1]/hook',
  'http://[64:ff9b::a9fe:a9fe]/hook',
  'http://0x7f.0.0.1/hook',
  'http://2130706433/hook',
  'http://017700000001/hook',
  'http://127.1/hook',
  'https://localhost:8443/hook',
];

describe.skipIf(!backend)('addresses the workers may not reach', () => {
  let gateway: GatewayHarness;
  let opened: GatewayHarness;
  beforeAll(async () => {
    gateway = await startGateway(backend!);
    opened = await startGateway(backend!, {
      webhookAllowedHosts: ['127.0.0.1/32', 'hooks.internal'],
      mcpTabHosts: ['*', '10.0.0.0/8'],
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await opened?.close();
  });

  const endpoints = async (harness: GatewayHarness) =>
    ((await harness.request('GET', '/v1/webhooks')).body as { endpoints: { url: string }[] })
      .endpoints;
  const tabCount = async (harness: GatewayHarness) =>
    ((await harness.request('GET', '/v1/tabs?limit=500')).body as { tabs: unknown[] }).tabs.length;

  it.each(refusedUrls)(
    'refuses a webhook endpoint at %s with 400, storing nothing',
    async (url) => {
      const response = await gateway.request('POST', '/v1/webhooks', {
        body: { url, eventTypes: ['turn.completed'] },
        headers: { 'idempotency-key': `refused ${url}` },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(expectedError('invalid_input'));
      const { message } = (response.body as { error: { message: string } }).error;
      expect(message).toBe(
        "body: /url the endpoint's address is not allowed: not a public address (WEBHOOK_ALLOWED_HOSTS can open it)",
      );
      expect(await endpoints(gateway)).toEqual([]);
    },
  );

  it('registers a public-looking host name: its addresses are checked at each delivery', async () => {
    for (const url of ['https://hooks.example.com/x', 'http://93.184.215.14/x']) {
      const response = await gateway.request('POST', '/v1/webhooks', {
        body: { url, eventTypes: ['turn.completed'] },
      });
      expect(response.status, url).toBe(201);
    }
    expect((await endpoints(gateway)).map((endpoint) => endpoint.url)).toEqual([
      'https://hooks.example.com/x',
      'http://93.184.215.14/x',
    ]);
  });

  it('registers what WEBHOOK_ALLOWED_HOSTS opens, and still refuses the rest', async () => {
    for (const url of ['http://127.0.0.1:9999/hook', 'http://hooks.internal/hook']) {
      const response = await opened.request('POST', '/v1/webhooks', {
        key: opened.tenantB.key,
        body: { url, eventTypes: ['turn.completed'] },
      });
      expect(response.status, url).toBe(201);
    }
    const refused = await opened.request('POST', '/v1/webhooks', {
      key: opened.tenantB.key,
      body: { url: 'http://10.0.0.1/hook', eventTypes: ['turn.completed'] },
    });
    expect(refused.status).toBe(400);
  });

  it('refuses a tab whose MCP server is at a private address MCP_TAB_HOSTS does not name', async () => {
    const before = await tabCount(gateway);
    for (const url of [
      'http://127.0.0.1:3000/mcp',
      'http://[::ffff:a9fe:a9fe]/mcp',
      'http://10.1.2.3/mcp',
    ]) {
      const response = await gateway.request('POST', '/v1/tabs', {
        body: {
          config: {
            mcpServers: [
              { name: 'docs', transport: 'http', url: 'https://mcp.example.com/mcp' },
              { name: 'inside', transport: 'http', url },
            ],
          },
        },
      });
      expect(response.status, url).toBe(400);
      expect((response.body as { error: { message: string } }).error.message).toBe(
        "body: /config/mcpServers/1/url MCP server inside's address is not allowed: not a public address (MCP_TAB_HOSTS can name it)",
      );
    }
    expect(await tabCount(gateway)).toBe(before);

    const named = await opened.request('POST', '/v1/tabs', {
      body: {
        config: { mcpServers: [{ name: 'inside', transport: 'http', url: 'http://10.1.2.3/mcp' }] },
      },
    });
    expect(named.status).toBe(201);
    const stillRefused = await opened.request('POST', '/v1/tabs', {
      body: {
        config: {
          mcpServers: [{ name: 'inside', transport: 'http', url: 'http://127.0.0.1/mcp' }],
        },
      },
    });
    expect(stillRefused.status).toBe(400);
  });
});
