/**
 * A real MCP server over stdio, run as a child process by tests (registerMcpTestTools; `die`
 * exits the process mid-call). Argument: a file to which it appends `started` when a `slow` call
 * begins and `cancelled` when the client cancels one.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { registerMcpTestTools } from './mcp-test-tools';

const events = process.argv[2];
const note = (line: string) => {
  if (events) appendFileSync(events, `${line}\n`);
};
const server = new McpServer({ name: 'chunklog-stdio-test', version: '1.0.0' });
registerMcpTestTools(server, {
  onSlowStarted: () => note('started'),
  onCancelled: () => note('cancelled'),
  die: () => process.exit(1),
});
await server.connect(new StdioServerTransport());
