export {
  createLogger,
  LOG_LEVELS,
  type LoggerSettings,
  type LogLevel,
  LogLevelSchema,
  loggerOptions,
} from './create-logger';
export {
  databaseEnv,
  listenEnv,
  logEnv,
  modelEnv,
  natsEnv,
  portSchema,
  shutdownEnv,
} from './env-schema';
export { EnvError, parseEnv } from './parse-env';
export {
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  type RunUntilSignalOptions,
  runUntilSignal,
  type SignalProcess,
  STOP_SIGNALS,
  type StopSignal,
} from './run-until-signal';
export { type StartProcess, startFailureLine, startStep } from './start-failure';
