export { assertNever } from './assert-never';
export {
  buildCompactionRequest,
  type CompactionRequest,
  findCompactionCut,
} from './build-compaction-request';
export {
  assembleRequest,
  buildRequest,
  type RequestOptions,
  stripCacheControl,
} from './build-request';
export {
  type CacheMiss,
  CacheMissSchema,
  cacheMissOfMessage,
  listCacheMisses,
  type StepCacheMiss,
} from './cache-miss';
export {
  type Chunk,
  type ChunkBody,
  ChunkBodySchema,
  type ChunkPage,
  ChunkPageSchema,
  type ChunkRole,
  ChunkSchema,
  type ChunkType,
  type NewChunk,
  NewChunkSchema,
  type ToolCallData,
  type ToolResultData,
} from './chunk';
export {
  type ChunkDraft,
  type ChunkPlace,
  errorChunk,
  systemNoticeChunk,
  toolResultChunk,
  userTextChunk,
} from './chunk-drafts';
export {
  ChunkWindow,
  type ChunkWindowOptions,
  type OpenChunk,
  type RenderGroup,
  type WindowChunk,
} from './chunk-window';
export {
  type CancelCommand,
  CancelCommandSchema,
  cancelSubject,
  INTAKE_QUEUE,
  IntakeModeSchema,
  type MessageCommand,
  MessageCommandSchema,
  MessageModeSchema,
  type OpenBlockSnapshot,
  OpenBlockSnapshotSchema,
  REQUEST_OPTIONS_QUEUE,
  REQUEST_OPTIONS_SUBJECT,
  type RequestOptionsQuery,
  RequestOptionsQuerySchema,
  type RequestOptionsReply,
  RequestOptionsReplySchema,
  snapshotSubject,
} from './commands';
export {
  COMPACTION_BETA,
  type CompactionBlock,
  CompactionBlockSchema,
  type CompactionConfig,
  CompactionConfigSchema,
  type CompactionData,
  CompactionDataSchema,
  type CompactionErrorCode,
  CompactionErrorCodeSchema,
  compactionDataFromResponse,
} from './compaction';
export { compactionAsText, SUMMARY_TEXT_PREFIX } from './compaction-as-text';
export { isDatabaseUnreachable } from './database-unreachable';
export {
  ChunklogError,
  type ChunklogErrorCode,
  ConflictError,
  describeError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  NotFoundError,
} from './errors';
export {
  type ChunkDeltaEvent,
  ChunkDeltaEventSchema,
  type ChunkOpenEvent,
  ChunkOpenEventSchema,
  type ChunkSealEvent,
  ChunkSealEventSchema,
  type LiveEvent,
  type LiveEventKind,
  LiveEventKindSchema,
  LiveEventSchema,
  liveEventSubject,
  type TurnDoneEvent,
  TurnDoneEventSchema,
  type TurnDoneReason,
  TurnDoneReasonSchema,
  type TurnStartEvent,
  TurnStartEventSchema,
  tabEventsSubject,
  type Usage,
  UsageSchema,
} from './events';
export { fitChunkForWire } from './fit-chunk-for-wire';
export { lastStepText, type ToolCallChunk, unansweredToolCalls } from './log-queries';
export {
  isSecretScopeVariable,
  LOCAL_TENANT_NAME,
  SECRET_ORIGINS_SUFFIX,
  SECRET_TENANTS_SUFFIX,
  type SecretScopeInput,
  secretRefusal,
  serverSecretRefusals,
} from './mcp-secret-scope';
export {
  DeploymentMcpServersSchema,
  MCP_SECRET_PREFIX,
  type McpHttpServer,
  McpHttpServerSchema,
  type McpServer,
  McpServerNameSchema,
  type McpStdioServer,
  McpStdioServerSchema,
  type SecretReference,
  SecretReferenceSchema,
  TabMcpServersSchema,
} from './mcp-servers';
export { buildMessages, type FoldOptions, MessageFold } from './message-fold';
export {
  initialStreamState,
  interruptedBlock,
  reduceStream,
  reduceStreamEvent,
  type StreamChunkBody,
  type StreamOperation,
  type StreamState,
} from './reduce-stream';
export {
  STREAM_EVENT_NAMES,
  type StreamEndEvent,
  StreamEndEventSchema,
  type StreamEndReason,
  type StreamLiveEvent,
  StreamLiveEventSchema,
} from './stream-events';
export {
  MAX_OUTPUT_TOKENS,
  type Tab,
  type TabConfig,
  TabConfigSchema,
  TabSchema,
  type TabStatus,
  TabStatusSchema,
} from './tab';
export { type TabRequestDefaults, tabRequestOptions } from './tab-request-options';
export { toolResultText } from './tool-result-text';
export { addUsage, emptyUsage } from './usage';
export {
  MAX_CACHE_BREAKPOINTS,
  type RequestViolation,
  TOOL_NAME_PATTERN,
  TOOL_USE_ID_PATTERN,
  type ValidateRequestOptions,
  validateRequest,
} from './validate-request';
export {
  type TurnEndedWebhookData,
  TurnEndedWebhookDataSchema,
  type WebhookDelivery,
  WebhookDeliverySchema,
  type WebhookDeliveryStatus,
  WebhookDeliveryStatusSchema,
  type WebhookEndpoint,
  WebhookEndpointSchema,
  type WebhookEvent,
  WebhookEventSchema,
  type WebhookEventType,
  WebhookEventTypeSchema,
  webhookEventTypeOf,
} from './webhooks';
export type {
  WireCompactionBlock,
  WireContentBlock,
  WireMessage,
  WireRequest,
  WireStreamEvent,
  WireTool,
} from './wire-types';
