export { mcpEnv, WorkerConfigSchema } from './config/worker-config';
export type { McpOptions } from './mcp/mcp-toolbox';
export { createWorkerMetrics } from './metrics/worker-metrics';
export { buildStepRequest } from './request/step-request';
export { builtinTools } from './tools/builtin-tools';
export { serveRemoteTool } from './tools/remote-tools';
export { defineTool, type ToolDefinition } from './tools/tool-registry';
export { signWebhook } from './webhooks/sign-webhook';
export {
  defaultWebhookDispatchOptions,
  type WebhookDispatchOptions,
  webhookDispatchOptions,
} from './webhooks/webhook-dispatch-options';
export { createWorker, type Worker } from './worker';
