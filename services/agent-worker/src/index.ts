export { createWorkerMetrics, type WorkerMetrics } from './metrics/worker-metrics';
export { buildStepRequest } from './request/step-request';
export { builtinTools } from './tools/builtin-tools';
export { serveRemoteTool } from './tools/remote-tools';
export {
  defineTool,
  type ToolContext,
  type ToolDefinition,
} from './tools/tool-registry';
export { createWorker, type Worker, type WorkerDependencies } from './worker';
