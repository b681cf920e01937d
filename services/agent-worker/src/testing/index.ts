export { deferred } from './deferred';
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
export { parseExposition } from './parse-exposition';
export {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from './webhook-receiver';
// The MCP test servers beside this file (mcp-*.ts) load the MCP SDK's server side: the suites
// that use them import them by path, so importing the harness does not load it.
