export type { Bus, Subscription, WorkItem } from './bus';
export {
  BusUnavailableError,
  NoRespondersError,
  RemoteHandlerError,
  RequestTimeoutError,
} from './bus-errors';
export { type BusLogger, consoleBusLogger } from './bus-logger';
export { createMemoryBus, type MemoryBusOptions } from './create-memory-bus';
export { createNatsBus, ERROR_REPLY_HEADER, type NatsBusOptions } from './create-nats-bus';
export { type NatsLatency, natsLatency } from './nats-latency';
export { subjectMatches } from './subject-matches';
