export {
  assertGapFree,
  createHarness,
  fastRetry,
  type Harness,
  openingChunk,
  startWorkerProcess,
  useHarness,
  useHarnessWithWorker,
} from './harness';
export { holdTool } from './hold-tool';
export { parseExposition } from './parse-exposition';
