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
} from './env-schema';
export { findAncestorWith } from './find-ancestor-with';
export { EnvError, parseEnv } from './parse-env';
export {
  type RunUntilSignalOptions,
  runUntilSignal,
  type SignalProcess,
  type StopSignal,
} from './run-until-signal';
export { type StartProcess, startStep } from './start-failure';
