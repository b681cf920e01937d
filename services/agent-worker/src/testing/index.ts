export {
  assertGapFree,
  createHarness,
  fastRetry,
  type Harness,
  openingChunk,
  startWorkerProcess,
  useHarness,
  useHarnessWithWorker,
} from './harness';
export { holdTool } from './hold-tool';
export { type McpHttpTestServer, startMcpHttpTestServer } from './mcp-http-test-server';
export { mcpStdioTestServer } from './mcp-stdio-test-config';
export { type McpTestToolHooks, registerMcpTestTools } from './mcp-test-tools';
export { parseExposition } from './parse-exposition';
