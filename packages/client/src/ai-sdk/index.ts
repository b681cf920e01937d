export { type AnswerStart, type AnswerState, answerStep, initialAnswerState } from './answer-parts';
export {
  ChunklogChatTransport,
  type ChunklogChatTransportOptions,
} from './chunklog-chat-transport';
export { chunksToUIMessages } from './chunks-to-ui-messages';
export type { ResumePointStorage } from './resume-points';
