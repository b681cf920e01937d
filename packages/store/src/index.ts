export type {
  AcquireLeaseResult,
  AppendOptions,
  ChunkStore,
  InboxMessage,
  MessageMode,
  PageOptions,
  TurnLease,
} from './chunk-store';
export { createPgliteStore, type PgliteStoreOptions } from './create-pglite-store';
export { createPostgresStore, type PostgresStoreOptions } from './create-postgres-store';
export { hashApiKey } from './hash-api-key';
export { migrationsFolder } from './migrations-folder';
export { maxChunkDataBytes, maxChunksPerAppend } from './validate-append';
