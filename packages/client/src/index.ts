export type {
  Chunk,
  ChunkPage,
  LiveEvent,
  OpenChunk,
  RenderGroup,
  SearchHit,
  SearchPage,
  Tab,
  TabConfig,
  TabStatus,
  Usage,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
  WebhookEventType,
  WindowChunk,
} from '@chunklog/chunk-core';
export { ChunkWindow } from '@chunklog/chunk-core';
export type { BackoffOptions } from './backoff';
export {
  ChunklogClient,
  type ChunklogClientOptions,
  type ChunkPageAround,
  type ChunkPageQuery,
  type CompactInput,
  type CreateTabInput,
  type CreateWebhookInput,
  createClient,
  type DecideOptions,
  type DecisionInput,
  type EditInput,
  type ForkedMessage,
  type ForkInput,
  type MessageAccepted,
  type MessageMode,
  type RegenerateInput,
  type SearchQuery,
  type SendMessageInput,
  type StreamTicket,
  type TabContext,
  type TabList,
  type WebhookWithSecret,
  type WebSocketConstructor,
} from './client';
export {
  type ApiErrorCode,
  ApprovalConflictError,
  type ApprovalDecision,
  ChunklogError,
} from './errors';
export type { StreamEvent } from './resume-filter';
export {
  type StreamState,
  TabStream,
  type TabStreamOptions,
} from './tab-stream';
export { TabView, type TabViewOptions, type TabViewSnapshot } from './tab-view';
export type { StreamTransport } from './transports';
export { type WaitingCallView, waitingCalls } from './waiting-calls';
