export {
  ChunkWindow,
  type ChunkWindowOptions,
  type OpenChunk,
  type RenderGroup,
  type WindowChunk,
} from './chunk-window';
export {
  buildCompactionRequest,
  type CompactionRequest,
  findCompactionCut,
} from './compaction/build-compaction-request';
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
} from './compaction/compaction';
export { compactionAsText, SUMMARY_TEXT_PREFIX } from './compaction/compaction-as-text';
export { assertNever } from './errors/assert-never';
export { isDatabaseUnreachable } from './errors/database-unreachable';
export {
  type ApiErrorCode,
  ConflictError,
  DomainError,
  type DomainErrorCode,
  describeError,
  domainErrorCodes,
  errorCodeOfStatus,
  errorStatuses,
  IdempotencyKeyReusedError,
  InvalidInputError,
  NotFoundError,
} from './errors/errors';
export { type DeltaPlacement, placeDelta, placeSeal, type SealPlacement } from './exactly-once';
export { isForkPoint, nearestForkPoints } from './fork/fork-point';
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
  type ApprovalDecisionData,
  ApprovalDecisionDataSchema,
  type ApprovalRequestData,
  ApprovalRequestDataSchema,
  type ApprovalVerdict,
  ApprovalVerdictSchema,
  type Chunk,
  type ChunkBody,
  ChunkBodySchema,
  type ChunkPage,
  ChunkPageSchema,
  type ChunkRole,
  ChunkRoleSchema,
  ChunkSchema,
  type ChunkType,
  ChunkTypeSchema,
  type NewChunk,
  NewChunkSchema,
  type ToolCallData,
  type ToolResultData,
} from './schemas/chunk';
export {
  type ChunkDraft,
  type ChunkPlace,
  errorChunk,
  systemNoticeChunk,
  toolResultChunk,
  userTextChunk,
} from './schemas/chunk-drafts';
export {
  type CancelCommand,
  CancelCommandSchema,
  cancelSubject,
  INTAKE_QUEUE,
  IntakeModeSchema,
  type InterruptNotice,
  InterruptNoticeSchema,
  interruptSubject,
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
} from './schemas/commands';
export {
  type ApprovalRequestedEvent,
  ApprovalRequestedEventSchema,
  type ApprovalResolvedEvent,
  ApprovalResolvedEventSchema,
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
  type TurnRetryEvent,
  TurnRetryEventSchema,
  type TurnStartEvent,
  TurnStartEventSchema,
  tabEventsSubject,
  type Usage,
  UsageSchema,
  type WaitingCall,
  WaitingCallSchema,
} from './schemas/events';
export { lastStepText, type ToolCallChunk, unansweredToolCalls } from './schemas/log-queries';
export {
  maxSearchLimit,
  maxSearchQueryLength,
  type SearchHit,
  SearchHitSchema,
  type SearchPage,
  SearchPageSchema,
} from './schemas/search';
export {
  STREAM_EVENT_NAMES,
  type StreamEndEvent,
  StreamEndEventSchema,
  type StreamEndReason,
  type StreamLiveEvent,
  StreamLiveEventSchema,
} from './schemas/stream-events';
export { addUsage, emptyUsage } from './schemas/usage';
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
} from './schemas/webhooks';
export { type ApprovalPolicy, ApprovalPolicySchema, needsApproval } from './tab/approval-policy';
export {
  isSecretScopeVariable,
  LOCAL_TENANT_NAME,
  SECRET_ORIGINS_SUFFIX,
  SECRET_TENANTS_SUFFIX,
  type SecretScopeInput,
  secretRefusal,
  serverSecretRefusals,
} from './tab/mcp-secret-scope';
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
} from './tab/mcp-servers';
export {
  MAX_OUTPUT_TOKENS,
  type Tab,
  type TabConfig,
  TabConfigSchema,
  TabSchema,
  type TabStatus,
  TabStatusSchema,
} from './tab/tab';
export {
  defaultRequestDefaults,
  type TabRequestDefaults,
  tabRequestOptions,
} from './tab/tab-request-options';
export {
  assembleRequest,
  buildRequest,
  type RequestOptions,
  stripCacheControl,
  TOOL_NAME_PATTERN,
} from './wire/build-request';
export {
  type CacheMiss,
  CacheMissSchema,
  cacheMissOfMessage,
  listCacheMisses,
  type StepCacheMiss,
} from './wire/cache-miss';
export { fitChunkForWire } from './wire/fit-chunk-for-wire';
export {
  buildMessages,
  type FoldOptions,
  LEFT_OUT_MESSAGE_TEXT,
  MessageFold,
} from './wire/message-fold';
export { toolResultText } from './wire/tool-result-text';
export type {
  WireCompactionBlock,
  WireContentBlock,
  WireMessage,
  WireRequest,
  WireStreamEvent,
  WireTool,
} from './wire/wire-types';
