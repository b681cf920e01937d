export { type FlakyProxy, type FlakyProxyOptions, startFlakyProxy } from './flaky-proxy';
export { sealedText, testTabId, testTurnId } from './sealed-text';
export { readLog, waitFor } from './wait';
