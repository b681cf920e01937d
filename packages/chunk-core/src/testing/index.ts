export {
  arbitraryChaoticLog,
  arbitraryChunkLog,
  ChunkLogWriter,
  TEST_TAB_ID,
  testUuid,
} from './arbitrary-chunk-log';
