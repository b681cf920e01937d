export {
  createSimulator,
  DEFAULT_CONTEXT_WINDOW_TOKENS,
  type Simulator,
  type SimulatorOptions,
  type SimulatorRequest,
} from './create-simulator';
export { type Clock, createManualClock, type ManualClock } from './manual-clock';
export type { CacheMissReason } from './prompt-cache/cache-diagnostics';
export { sharedPromptTokens } from './prompt-cache/shared-prompt-tokens';
export {
  MAX_CACHE_BREAKPOINTS,
  type RequestViolation,
  TOOL_USE_ID_PATTERN,
  type ValidateRequestOptions,
  validateRequest,
} from './request/validate-request';
export { SimulatorEnvSchema } from './simulator-env';
