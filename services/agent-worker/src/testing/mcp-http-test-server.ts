import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { registerMcpTestTools } from './mcp-test-tools';

/** A real MCP server over Streamable HTTP on a local port, for tests. */
export interface McpHttpTestServer {
  url: string;
  /** The headers of every HTTP request it received. */
  headers: IncomingHttpHeaders[];
  /** How many `slow` calls began, and how many of them the client cancelled. */
  slowStarted(): number;
  cancelled(): number;
  /** Adds a tool `late` to every session (each sends `notifications/tools/list_changed`). */
  addLateTool(): void;
  close(): Promise<void>;
}

/**
 * Starts the test tools (registerMcpTestTools) behind the SDK's Streamable HTTP server
 * transport, one McpServer per session. Its `die` tool cuts every connection and stops
 * listening: a server that dies mid-call.
 */
export async function startMcpHttpTestServer(): Promise<McpHttpTestServer> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: McpServer }>();
  const headers: IncomingHttpHeaders[] = [];
  let slowStarted = 0;
  let cancelled = 0;
  let late = false;

  const addLate = (mcp: McpServer) =>
    mcp.registerTool(
      'late',
      { description: 'Added after the first listing', inputSchema: { n: z.number() } },
      async ({ n }) => ({ content: [{ type: 'text', text: `late ${n}` }] }),
    );

  const http = createServer(async (request, response) => {
    headers.push(request.headers);
    const sessionId = request.headers['mcp-session-id'];
    let session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!session && sessionId === undefined && request.method === 'POST') {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
      });
      const mcp = new McpServer({ name: 'chunklog-test', version: '1.0.0' });
      registerMcpTestTools(mcp, {
        onSlowStarted: () => slowStarted++,
        onCancelled: () => cancelled++,
        die: () => {
          http.close();
          http.closeAllConnections();
        },
      });
      if (late) addLate(mcp);
      const created = { transport, mcp };
      await mcp.connect(transport);
      session = created;
    }
    if (!session) {
      response.writeHead(404).end();
      return;
    }
    await session.transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    slowStarted: () => slowStarted,
    cancelled: () => cancelled,
    addLateTool() {
      late = true;
      for (const { mcp } of sessions.values()) addLate(mcp);
    },
    async close() {
      await Promise.allSettled([...sessions.values()].map(({ mcp }) => mcp.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
