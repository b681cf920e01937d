/**
 * The environment schemas and their parser alone (`@chunklog/runtime/env`): a process's config
 * loads this much of the runtime, and none of the logger, metrics or tracing, so the first step
 * of a start stays small.
 */
export {
  approvalPolicyFromEnv,
  databaseEnv,
  listenEnv,
  logEnv,
  modelEnv,
  natsEnv,
  outboundEnv,
  shutdownEnv,
  webhookEnv,
} from './env-schema';
export { EnvError, parseEnv } from './parse-env';
