export {
  arbitraryChaoticLog,
  arbitraryChunkLog,
  ChunkLogWriter,
  TEST_TAB_ID,
  testUuid,
} from './arbitrary-chunk-log';
export {
  arbitraryCompactionPlan,
  type CompactionPlan,
  fakeCompactionBlock,
  insertCompactions,
  stepBoundaries,
} from './arbitrary-compacted-log';
