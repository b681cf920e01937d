import { fileURLToPath } from 'node:url';
import type { McpStdioServer } from '@chunklog/chunk-core';

const script = fileURLToPath(new URL('./mcp-stdio-test-server.ts', import.meta.url));
const repositoryRoot = fileURLToPath(new URL('../../../..', import.meta.url));

/**
 * The deployment entry for the stdio test server (mcp-stdio-test-server.ts) run through tsx;
 * it notes `started` and `cancelled` lines in `eventsFile`.
 */
export function mcpStdioTestServer(name: string, eventsFile: string): McpStdioServer {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', script, eventsFile],
    cwd: repositoryRoot,
  };
}
