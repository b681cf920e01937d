export type { Bus, Subscription, WorkItem } from './bus';
export {
  BusUnavailableError,
  NoRespondersError,
  RemoteHandlerError,
  RequestTimeoutError,
} from './bus-errors';
export type { BusLogger } from './bus-logger';
export { createMemoryBus, type MemoryBusOptions } from './memory/create-memory-bus';
export { createNatsBus, type NatsBusOptions } from './nats/create-nats-bus';
export { type NatsLatency, natsLatency } from './nats/nats-latency';
