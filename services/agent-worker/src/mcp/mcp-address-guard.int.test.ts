/**
 * A tab's MCP server is connected to only at a public address, unless MCP_TAB_HOSTS names its
 * host (by name, address or network): with the list unset (`*`), a server on loopback, in its
 * URL or behind a name, never hears from the worker. Everything here stays on loopback: a name
 * "resolves" where the test's resolver says.
 */
import type { McpHttpServer } from '@chunklog/chunk-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolveHost } from '../outbound/guarded-agent';
import { type McpHttpTestServer, startMcpHttpTestServer } from '../testing/mcp-http-test-server';
import { createMcpToolbox } from './mcp-toolbox';

const logLines: string[] = [];
const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
const toolContext = { signal: new AbortController().signal } as never;

const resolveHost: ResolveHost = async (hostname) => {
  if (hostname === 'mcp.example.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

let server: McpHttpTestServer;
let port: string;
beforeAll(async () => {
  server = await startMcpHttpTestServer();
  port = new URL(server.url).port;
});
afterAll(async () => {
  await server.close();
});

const kit = (url: string): McpHttpServer => ({ name: 'kit', transport: 'http', url });
const tabNaming = (url: string) => ({ config: { mcpServers: [kit(url)] }, tenant: 'alpha' });

/** Prepares the tab's servers, then calls kit_echo; the toolbox is closed after. */
async function echoThrough(tabHosts: string[] | undefined, url: string) {
  const toolbox = createMcpToolbox({
    logger,
    resolveHost,
    ...(tabHosts ? { tabHosts } : {}),
  });
  try {
    const tab = tabNaming(url);
    await toolbox.prepare(tab, AbortSignal.timeout(20_000));
    const [tools] = toolbox.toolSets(tab);
    return {
      offered: tools!.names(),
      outcome: await tools!.run('kit_echo', { text: 'hi' }, toolContext),
    };
  } finally {
    await toolbox.close();
  }
}

describe("a tab's MCP server at a private address", () => {
  it('is refused with MCP_TAB_HOSTS unset, in any spelling: every call answers why, nothing is sent', async () => {
    for (const host of ['127.0.0.1', '0x7f.0.0.1', '[::ffff:127.0.0.1]', 'localhost']) {
      const { offered, outcome } = await echoThrough(undefined, `http://${host}:${port}/mcp`);
      expect(offered, host).toEqual([]);
      expect(outcome, host).toEqual({
        result:
          'MCP server kit is not used for this tab: its address is not allowed: not a public address (MCP_TAB_HOSTS can name it)',
        isError: true,
      });
    }
    expect(server.headers).toEqual([]);
    expect(logLines.some((line) => line.includes('MCP server address refused'))).toBe(true);
  });

  it('is never connected to behind a name that resolves to loopback', async () => {
    const { offered, outcome } = await echoThrough(
      undefined,
      `http://mcp.example.test:${port}/mcp`,
    );
    expect(offered).toEqual([]);
    expect(outcome).toMatchObject({ isError: true });
    expect(JSON.stringify(outcome)).not.toContain('127.0.0.1');
    expect(server.headers).toEqual([]);
    // The operator's log says which host and address.
    expect(
      logLines.some(
        (line) =>
          line.includes('MCP server address refused') &&
          line.includes('"host":"mcp.example.test"') &&
          line.includes('"address":"127.0.0.1"'),
      ),
    ).toBe(true);
  });

  it('is used when MCP_TAB_HOSTS names it: by address, by network beside `*`, or by name', async () => {
    for (const [tabHosts, url] of [
      [['127.0.0.1'], server.url],
      [['*', '127.0.0.0/8'], server.url],
      [['*', '127.0.0.0/8'], `http://mcp.example.test:${port}/mcp`],
      [['mcp.example.test'], `http://mcp.example.test:${port}/mcp`],
    ] as const) {
      const { offered, outcome } = await echoThrough([...tabHosts], url);
      expect(offered, `${tabHosts} ${url}`).toContain('kit_echo');
      expect(outcome).toEqual({ result: 'echo: hi', isError: false });
    }
    expect(server.headers.length).toBeGreaterThan(0);
  });
});
