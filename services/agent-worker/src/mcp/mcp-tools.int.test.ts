import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Chunk, TabConfig, ToolResultData } from '@chunklog/chunk-core';
import { freePort } from '@chunklog/test-infra';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertGapFree, createHarness, type Harness } from '../testing/harness';
import { type McpHttpTestServer, startMcpHttpTestServer } from '../testing/mcp-http-test-server';
import { mcpStdioTestServer } from '../testing/mcp-stdio-test-config';
import type { Worker } from '../worker';

const SECRET = 'token-that-must-not-leak';
const eventsDirectory = mkdtempSync(join(tmpdir(), 'chunklog-mcp-'));
const stdioEvents = join(eventsDirectory, 'stdio-events');

let harness: Harness | null;
/** A tenant MCP_SECRET_TEST_TOKEN_TENANTS lists besides the harness's, and one it does not. */
let otherTenant = '';
let strangerTenant = '';
const logLines: string[] = [];
let worker: Worker | undefined;
const servers: McpHttpTestServer[] = [];
/** The deployment's own Streamable HTTP server (MCP_SERVERS), named `shared`. */
let deploymentServer: McpHttpTestServer | undefined;

beforeAll(async () => {
  harness = await createHarness('nats');
  if (harness) {
    deploymentServer = await startMcpHttpTestServer();
    servers.push(deploymentServer);
  }
  if (harness) {
    otherTenant = (await harness.store.createTenant({ name: `other-${randomUUID()}` })).id;
    strangerTenant = (await harness.store.createTenant({ name: `stranger-${randomUUID()}` })).id;
  }
  const listed = harness
    ? [
        await harness.store.tenantName(harness.tenantId),
        await harness.store.tenantName(otherTenant),
      ]
    : [];
  worker = await harness?.startWorker({
    // Every line the worker logs, at every level, to check that no secret is among them.
    logger: pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) }),
    mcp: {
      servers: [
        mcpStdioTestServer('local', stdioEvents),
        ...(deploymentServer
          ? [{ name: 'shared', transport: 'http' as const, url: deploymentServer.url }]
          : []),
      ],
      environment: {
        MCP_SECRET_TEST_TOKEN: SECRET,
        MCP_SECRET_TEST_TOKEN_TENANTS: listed.join(','),
        // Allowed to every tenant, and missing.
        MCP_SECRET_NOT_SET_TENANTS: '*',
      },
      // The tabs' test servers listen on loopback, which only a host the list names may be on.
      tabHosts: ['127.0.0.1'],
      // A loaded machine can take many seconds to start the stdio server through tsx.
      listTimeoutMs: 60_000,
    },
  });
  // The deployment's server is listed in the background from start; wait for it, so every
  // request of the tests below offers the same tools.
  if (worker) {
    await vi.waitFor(
      () => {
        const offered = JSON.stringify(worker!.nextRequest({ config: {}, log: [] }).tools);
        if (!offered.includes('local_echo')) throw new Error('the stdio server is not listed yet');
        if (!offered.includes('shared_echo')) throw new Error('the HTTP server is not listed yet');
      },
      { timeout: 60_000, interval: 100 },
    );
  }
}, 90_000);
afterAll(async () => {
  await harness?.close();
  await Promise.allSettled(servers.map((server) => server.close()));
  rmSync(eventsDirectory, { recursive: true, force: true });
});

async function httpServer(): Promise<McpHttpTestServer> {
  const server = await startMcpHttpTestServer();
  servers.push(server);
  return server;
}

/** A tab naming `server` as its MCP server `kit`, with a secret header. */
function kitConfig(server: McpHttpTestServer): TabConfig {
  return {
    mcpServers: [
      {
        name: 'kit',
        transport: 'http',
        url: server.url,
        headers: { 'X-Test-Token': { secret: 'MCP_SECRET_TEST_TOKEN' } },
      },
    ],
  };
}

/** The MCP session ids a server was sent. */
function sessionIds(server: McpHttpTestServer): Set<string> {
  return new Set(
    server.headers.flatMap((headers) => {
      const id = headers['mcp-session-id'];
      return typeof id === 'string' ? [id] : [];
    }),
  );
}

const toolResults = (log: readonly Chunk[]): ToolResultData[] =>
  log.flatMap((chunk) => (chunk.type === 'tool_result' ? [chunk.data] : []));

type SentRequest = { tools?: { name: string; input_schema: unknown }[] };
const offeredIn = (marker: string) =>
  (harness!.requestsMentioning(marker)[0]?.body as SentRequest | undefined)?.tools ?? [];

describe('MCP tools over Streamable HTTP (a tab names the server)', () => {
  it('offers the tools with their schemas, calls them with the secret header, and seals results and errors', async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const tab = await harness.newTab(kitConfig(server));
    await harness.send(tab.id, 'mcp-echo [[sim: tool kit_echo {"text":"hi"}]]');
    await harness.send(tab.id, 'mcp-fail [[sim: tool kit_fail {}]]', 'enqueue');
    await harness.turnsDone(tab.id, 2);

    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(toolResults(log)).toEqual([
      expect.objectContaining({ name: 'kit_echo', result: 'echo: hi', isError: false }),
      expect.objectContaining({
        name: 'kit_fail',
        result: 'the tool failed on purpose',
        isError: true,
      }),
    ]);
    const offered = offeredIn('mcp-echo');
    expect(offered.find((tool) => tool.name === 'kit_echo')?.input_schema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string', minLength: 1 } },
      required: ['text'],
    });
    // The name the API would refuse is offered cleaned, and builtins come first.
    expect(offered.map((tool) => tool.name)).toContainEqual(
      expect.stringMatching(/^kit_search_v2_[0-9a-f]{8}$/),
    );
    expect(offered.map((tool) => tool.name).indexOf('calculator')).toBeLessThan(
      offered.map((tool) => tool.name).indexOf('kit_echo'),
    );
    // Byte-identical tools across the tab's requests: the prompt cache's prefix holds.
    expect(JSON.stringify(offeredIn('mcp-fail'))).toBe(JSON.stringify(offered));

    expect(server.headers.length).toBeGreaterThan(0);
    for (const headers of server.headers) expect(headers['x-test-token']).toBe(SECRET);
    const stored = await harness.store.getTab(tab.id);
    expect(JSON.stringify([stored, log])).not.toContain(SECRET);
    expect(logLines.some((line) => line.includes('MCP tools listed'))).toBe(true);
    expect(logLines.join('\n')).not.toContain(SECRET);
  });

  it('aborts a slow call when the turn is cancelled, and the server hears the cancel', async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const tab = await harness.newTab(kitConfig(server));
    await harness.send(tab.id, 'mcp-slow [[sim: tool kit_slow {"milliseconds":60000}]]');
    await expect.poll(server.slowStarted, { timeout: 15_000 }).toBe(1);
    await harness.cancel(tab.id);
    const log = await harness.awaitTurnEnd(tab.id, 'cancelled');
    await expect.poll(server.cancelled, { timeout: 10_000 }).toBe(1);
    expect(toolResults(log)).toEqual([
      expect.objectContaining({ name: 'kit_slow', isError: true }),
    ]);
  });

  it('answers a call to a server that dies mid-call with an error result, and the turn goes on', async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const tab = await harness.newTab(kitConfig(server));
    await harness.send(tab.id, 'mcp-die [[sim: tool kit_die {}]]');
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    const [result] = toolResults(log);
    expect(result).toMatchObject({ name: 'kit_die', isError: true });
    expect(String(result?.result)).toMatch(/MCP server kit failed/);
    // The turn went on: the model answered after the error result.
    expect(log.at(-1)).toMatchObject({ role: 'assistant', type: 'text' });
  });

  it('runs the turn without the tools of a server nobody answers at, and says so in the result', async (context) => {
    if (!harness) return context.skip();
    const tab = await harness.newTab({
      mcpServers: [
        { name: 'gone', transport: 'http', url: `http://127.0.0.1:${await freePort()}/mcp` },
      ],
    });
    await harness.send(tab.id, 'mcp-gone [[sim: tool gone_echo {"text":"anyone?"}]]');
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    expect(toolResults(log)).toEqual([
      expect.objectContaining({
        name: 'gone_echo',
        result: 'Unknown tool: gone_echo',
        isError: true,
      }),
    ]);
    expect(offeredIn('mcp-gone').map((tool) => tool.name)).not.toContain('gone_echo');
  });

  it('leaves out a server whose secret the worker lacks, without sending it a request', async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const tab = await harness.newTab({
      mcpServers: [
        {
          name: 'nokey',
          transport: 'http',
          url: server.url,
          headers: { Authorization: { secret: 'MCP_SECRET_NOT_SET' } },
        },
      ],
    });
    await harness.send(tab.id, 'mcp-nokey [[sim: tool nokey_echo {"text":"x"}]]');
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    expect(toolResults(log)).toEqual([
      expect.objectContaining({ name: 'nokey_echo', isError: true }),
    ]);
    expect(server.headers).toEqual([]);
    expect(
      logLines.some(
        (line) => line.includes('MCP server unavailable') && line.includes('MCP_SECRET_NOT_SET'),
      ),
    ).toBe(true);
  });

  it('never sends a secret for a tenant it is not listed for: every call answers why', async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const tab = await harness.store.createTab({
      tenantId: strangerTenant,
      config: kitConfig(server),
    });
    await harness.send(tab.id, 'mcp-stranger [[sim: tool kit_echo {"text":"leak?"}]]');
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    const [result] = toolResults(log);
    expect(result).toMatchObject({ name: 'kit_echo', isError: true });
    expect(String(result?.result)).toMatch(
      /^MCP server kit is not used for this tab: secret MCP_SECRET_TEST_TOKEN is not for tenant stranger-.* \(MCP_SECRET_TEST_TOKEN_TENANTS\)$/,
    );
    expect(offeredIn('mcp-stranger').map((tool) => tool.name)).not.toContain('kit_echo');
    expect(server.headers).toEqual([]);
    expect(JSON.stringify(log)).not.toContain(SECRET);
    expect(logLines.some((line) => line.includes('MCP server secret refused'))).toBe(true);
  });

  it("keeps two tenants' sessions of one server apart, and shares one within a tenant", async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const countIn = async (tabId: string, marker: string) => {
      await harness!.send(tabId, `${marker} [[sim: tool kit_count {}]]`);
      await harness!.turnsDone(tabId, 1);
      return toolResults(await harness!.store.readAll(tabId)).map((result) => result.result);
    };
    const first = await harness.newTab(kitConfig(server));
    const second = await harness.newTab(kitConfig(server));
    const others = await harness.store.createTab({
      tenantId: otherTenant,
      config: kitConfig(server),
    });
    expect(await countIn(first.id, 'mcp-count-first')).toEqual(['count 1']);
    // The other tenant's tab names the server alike, but gets a session of its own.
    expect(await countIn(others.id, 'mcp-count-other')).toEqual(['count 1']);
    expect(await countIn(second.id, 'mcp-count-second')).toEqual(['count 2']);
    const sessions = new Set(server.headers.map((headers) => headers['mcp-session-id']));
    sessions.delete(undefined);
    expect(sessions.size).toBe(2);
  });

  it("resolves a tab's tenant in one store call per turn", async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const tab = await harness.newTab(kitConfig(server));
    const store = harness.store;
    const calls = [
      vi.spyOn(store, 'tabTenant'),
      vi.spyOn(store, 'tenantName'),
      vi.spyOn(store, 'tabTenantName'),
    ];
    try {
      await harness.send(tab.id, 'mcp-tenant-once [[sim: tool kit_echo {"text":"once"}]]');
      await harness.turnsDone(tab.id, 1);
      const [tabTenant, tenantName, tabTenantName] = calls.map((spy) => spy.mock.calls);
      expect(tabTenant).toEqual([]);
      expect(tenantName).toEqual([]);
      expect(tabTenantName).toEqual([[tab.id]]);
    } finally {
      for (const spy of calls) spy.mockRestore();
    }
    expect(toolResults(await store.readAll(tab.id))).toEqual([
      expect.objectContaining({ name: 'kit_echo', result: 'echo: once', isError: false }),
    ]);
  });

  it('offers a tool the server adds, once it says its list changed', async (context) => {
    if (!harness) return context.skip();
    const server = await httpServer();
    const tab = await harness.newTab(kitConfig(server));
    await harness.send(tab.id, 'mcp-before [[sim: tool kit_echo {"text":"first"}]]');
    await harness.turnsDone(tab.id, 1);
    expect(offeredIn('mcp-before').map((tool) => tool.name)).not.toContain('kit_late');

    server.addLateTool();
    const tenant = await harness.store.tenantName(harness.tenantId);
    const offeredNow = () =>
      (worker!.nextRequest({ config: tab.config, log: [], tenant }).tools ?? []).map(
        (tool) => (tool as { name: string }).name,
      );
    await expect.poll(offeredNow, { timeout: 10_000 }).toContain('kit_late');
    await harness.send(tab.id, 'mcp-after [[sim: tool kit_late {"n":7}]]');
    await harness.turnsDone(tab.id, 2);
    expect(toolResults(await harness.store.readAll(tab.id)).at(-1)).toMatchObject({
      name: 'kit_late',
      result: 'late 7',
      isError: false,
    });
  });
});

describe("the deployment's MCP servers (MCP_SERVERS)", () => {
  it("keeps two tenants' sessions of a deployment server apart, and shares one within a tenant", async (context) => {
    if (!harness || !deploymentServer) return context.skip();
    const countIn = async (tabId: string, marker: string) => {
      await harness!.send(tabId, `${marker} [[sim: tool shared_count {}]]`);
      await harness!.turnsDone(tabId, 1);
      return toolResults(await harness!.store.readAll(tabId)).map((result) => result.result);
    };
    const tenantTab = async (tenantId: string) => (await harness!.store.createTab({ tenantId })).id;
    const [alpha, beta] = await Promise.all(
      ['alpha', 'beta'].map(
        async (name) => (await harness!.store.createTenant({ name: `${name}-${randomUUID()}` })).id,
      ),
    );
    const first = await tenantTab(alpha!);
    const second = await tenantTab(alpha!);
    const others = await tenantTab(beta!);
    const before = sessionIds(deploymentServer);
    expect(await countIn(first, 'shared-count-first')).toEqual(['count 1']);
    // The other tenant's tab uses the same server, but gets a session of its own.
    expect(await countIn(others, 'shared-count-other')).toEqual(['count 1']);
    expect(await countIn(second, 'shared-count-second')).toEqual(['count 2']);
    const opened = [...sessionIds(deploymentServer)].filter((id) => !before.has(id));
    expect(opened).toHaveLength(2);
  });
});

describe('MCP tools over stdio (the deployment names the server)', () => {
  it('calls a tool of a child-process server, answers its death with an error result, and starts it again', async (context) => {
    if (!harness) return context.skip();
    const tab = await harness.newTab();
    await harness.send(tab.id, 'stdio-echo [[sim: tool local_echo {"text":"over stdio"}]]');
    await harness.send(tab.id, 'stdio-die [[sim: tool local_die {}]]', 'enqueue');
    await harness.send(tab.id, 'stdio-again [[sim: tool local_echo {"text":"again"}]]', 'enqueue');
    // Restarting the child through tsx takes seconds on a loaded machine.
    await harness.turnsDone(tab.id, 3, 50_000);
    const done = harness.events.get(tab.id)!.filter((event) => event.event === 'turn-done');
    expect(done.map((event) => event.event === 'turn-done' && event.data.reason)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
    const results = toolResults(await harness.store.readAll(tab.id));
    expect(results).toEqual([
      expect.objectContaining({ name: 'local_echo', result: 'echo: over stdio', isError: false }),
      expect.objectContaining({ name: 'local_die', isError: true }),
      expect.objectContaining({ name: 'local_echo', result: 'echo: again', isError: false }),
    ]);
    expect(offeredIn('stdio-echo').map((tool) => tool.name)).toContain('local_echo');
  });

  it('aborts a slow call when the turn is cancelled, and the child process hears the cancel', async (context) => {
    if (!harness) return context.skip();
    const events = () => {
      try {
        return readFileSync(stdioEvents, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    const tab = await harness.newTab();
    await harness.send(tab.id, 'stdio-slow [[sim: tool local_slow {"milliseconds":60000}]]');
    await expect.poll(events, { timeout: 15_000 }).toContain('started');
    await harness.cancel(tab.id);
    await harness.awaitTurnEnd(tab.id, 'cancelled');
    await expect.poll(events, { timeout: 10_000 }).toContain('cancelled');
  });
});
