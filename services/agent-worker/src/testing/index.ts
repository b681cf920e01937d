export {
  assertGapFree,
  createHarness,
  fastRetry,
  type Harness,
  startWorkerProcess,
} from './harness';
export { holdTool } from './hold-tool';
export { parseExposition } from './parse-exposition';
