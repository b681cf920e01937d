export {
  createLogger,
  type LoggerSettings,
  type LogLevel,
  LogLevelSchema,
} from './create-logger';
export {
  databaseEnv,
  listenEnv,
  logEnv,
  modelEnv,
  natsEnv,
  shutdownEnv,
  webhookEnv,
} from './env-schema';
export { findAncestorWith } from './find-ancestor-with';
export { chunklogVersion } from './metrics/chunklog-version';
export { registerProcessMetrics } from './metrics/register-process-metrics';
export { EnvError, parseEnv } from './parse-env';
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
