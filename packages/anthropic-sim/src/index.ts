export type { CacheMissReason } from './cache-diagnostics';
export {
  createSimulator,
  DEFAULT_CONTEXT_WINDOW_TOKENS,
  type Simulator,
  type SimulatorOptions,
  type SimulatorRequest,
} from './create-simulator';
export { type Clock, createManualClock, type ManualClock } from './manual-clock';
export { sharedPromptTokens } from './shared-prompt-tokens';
export { SimulatorEnvSchema } from './simulator-env';
