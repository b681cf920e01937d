export type {
  AcquireLeaseResult,
  AppendOptions,
  ChunkStore,
  InboxMessage,
  MessageMode,
  PageOptions,
  TurnLease,
} from './chunk-store';
