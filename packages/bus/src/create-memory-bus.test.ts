import { busContract } from './bus-contract';
import type { BusLogger } from './bus-logger';
import { createMemoryBus } from './create-memory-bus';

// Expected failures (a handler that throws on purpose) would only clutter the test output.
const quietLogger: BusLogger = { info() {}, warn() {}, error() {} };

busContract('in-process', {
  createBus: async () => createMemoryBus({ logger: quietLogger }),
  // An in-process bus is its own broker: the second party shares the same instance.
  createPeer: async (bus) => bus,
});
