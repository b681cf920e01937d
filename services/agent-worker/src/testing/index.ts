export {
  assertGapFree,
  createHarness,
  fastRetry,
  type Harness,
  startWorkerProcess,
} from './harness';
export { parseExposition } from './parse-exposition';
