export { createLogger, type Logger, type LogLevel, LogLevelSchema } from './logger';
export { type MetricsServer, serveWorkerMetrics } from './metrics/metrics-server';
export {
  createWorkerMetrics,
  type ModelStepOutcome,
  type ToolCallOutcome,
  type WorkerMetrics,
} from './metrics/worker-metrics';
export { buildStepRequest } from './request/step-request';
export { createTaskTool, type SubagentRunner } from './subagents/task-tool';
export { builtinTools, calculatorTool, getTimeTool, sleepTool } from './tools/builtin-tools';
export { evaluateArithmetic } from './tools/evaluate-arithmetic';
export {
  createRemoteToolDirectory,
  serveRemoteTool,
  TOOL_ANNOUNCE_SUBJECT,
  TOOL_DISCOVER_SUBJECT,
  type ToolAnnouncement,
  ToolAnnouncementSchema,
  type ToolCallReply,
  ToolCallReplySchema,
  type ToolCallRequest,
  ToolCallRequestSchema,
  toolCallSubject,
} from './tools/remote-tools';
export {
  createToolRegistry,
  defineTool,
  type ToolContext,
  type ToolDefinition,
  type ToolOutcome,
  type ToolRegistry,
} from './tools/tool-registry';
export {
  defaultRetryPolicy,
  errorStatus,
  isRetryable,
  type RetryPolicy,
  retryAfterMs,
  retryDelay,
} from './turn/retry-policy';
export { planTakeover, resumePoint } from './turn/takeover';
export { unansweredToolCalls } from './turn/turn-runner';
export { createWorker, type Worker, type WorkerDependencies } from './worker';
