/** Moved to @chunklog/test-infra; this path stays until the gateway's outage test imports it there. */
export { NATS_SERVER_BINARY, natsServerAvailable, PrivateNatsServer } from '@chunklog/test-infra';
