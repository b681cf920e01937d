export { type ApiErrorType, errorTypeForStatus } from './api-error-type';
export type { AssistantMessage, MessageUsage, ReplyBlock } from './assistant-message';
export { buildStreamEvents, type StreamEvent } from './build-stream-events';
export { canonicalJson } from './canonical-json';
export {
  createSimulator,
  type Simulator,
  type SimulatorOptions,
  type SimulatorRequest,
  SUPPORTED_ANTHROPIC_VERSIONS,
} from './create-simulator';
export { estimateTokens } from './estimate-tokens';
export { formatRequestLog } from './format-request-log';
export { listPromptBlocks, type PromptBlock } from './list-prompt-blocks';
export { type Clock, createManualClock, type ManualClock, systemClock } from './manual-clock';
export { type Directive, parseDirectives } from './parse-directives';
export { type CacheUsage, createPromptCache, type PromptCache } from './prompt-cache';
export { createThinkingSigner, type ThinkingSigner } from './thinking-signer';
