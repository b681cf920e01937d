export { createLogger, defaultLogger, type LoggerSettings } from './create-logger';
// The environment schemas and their parser, also `@chunklog/runtime/env` on their own.
export {
  databaseEnv,
  EnvError,
  listenEnv,
  logEnv,
  modelEnv,
  natsEnv,
  outboundEnv,
  parseEnv,
  shutdownEnv,
  webhookEnv,
} from './env';
export { findAncestorWith } from './find-ancestor-with';
export { type LogLevel, LogLevelSchema } from './log-level';
export { chunklogVersion } from './metrics/chunklog-version';
export { registerProcessMetrics } from './metrics/register-process-metrics';
export {
  type RunUntilSignalOptions,
  runUntilSignal,
  type SignalProcess,
  type StopSignal,
} from './run-until-signal';
export { type StartProcess, startStep } from './start-failure';
export {
  chunklogTracer,
  type InSpanOptions,
  inLeafSpan,
  inSpan,
  recordSpanError,
} from './tracing/in-span';
export {
  type DeferredSpan,
  type DeferredSpanOptions,
  startDeferredSpan,
} from './tracing/start-deferred-span';
export { startTracing, type Tracing, type TracingOptions } from './tracing/start-tracing';
export { type TraceLogFields, traceLogFields } from './tracing/trace-log-fields';
export { tracingActive } from './tracing/tracing-active';
export { type OtlpProtocol, readTracingRequest, type TracingRequest } from './tracing/tracing-env';
