export { builtinTools, calculatorTool, getTimeTool, sleepTool } from './builtin-tools';
export { evaluateArithmetic } from './evaluate-arithmetic';
export { createLogger, type Logger, type LogLevel, LogLevelSchema } from './logger';
export { type MetricsServer, serveWorkerMetrics } from './metrics-server';
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
} from './remote-tools';
export {
  defaultRetryPolicy,
  errorStatus,
  isRetryable,
  type RetryPolicy,
  retryAfterMs,
  retryDelay,
} from './retry-policy';
export { buildStepRequest } from './step-request';
export { planTakeover, resumePoint } from './takeover';
export { createTaskTool, type SubagentRunner } from './task-tool';
export {
  createToolRegistry,
  defineTool,
  type ToolContext,
  type ToolDefinition,
  type ToolOutcome,
  type ToolRegistry,
} from './tool-registry';
export { unansweredToolCalls } from './turn-runner';
export { createWorker, type Worker, type WorkerDependencies } from './worker';
export {
  createWorkerMetrics,
  type ModelStepOutcome,
  type ToolCallOutcome,
  type WorkerMetrics,
} from './worker-metrics';
