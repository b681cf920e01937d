/**
 * Test harnesses of the gateway (`@chunklog/gateway/testing`), for suites in this and other
 * packages; production code never imports them.
 */
export { apiRouteCalls, type RouteCall, tabRouteCalls, webhookRouteCalls } from './api-routes';
export { capturedLog } from './captured-log';
export { expectedError } from './expected-error';
export {
  type GatewayHarness,
  type JsonResponse,
  startGateway,
  type TestTenant,
} from './gateway-harness';
export {
  openEventSource,
  openWebSocket,
  type ReceivedEvent,
  type RecordingClient,
  sealsOf,
} from './stream-clients';
export {
  type Backend,
  type BackendFactory,
  embeddedBackend,
  everyBackend,
  postgresBackend,
  realBackend,
} from './test-backends';
export { TurnDriver } from './turn-driver';
