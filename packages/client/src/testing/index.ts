export { type FlakyProxy, type FlakyProxyOptions, startFlakyProxy } from './flaky-proxy';
export {
  type GatewayProcess,
  type RealGateway,
  type RealGatewayOptions,
  startRealGateway,
} from './real-gateway';
export { sealedText, testTabId, testTurnId } from './sealed-text';
export { readLog, waitFor } from './wait';
