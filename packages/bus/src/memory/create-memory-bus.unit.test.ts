import pino from 'pino';
import { busContract } from '../testing/bus-contract';
import { busTraceContextContract } from '../testing/trace-context-contract';
import { createMemoryBus } from './create-memory-bus';

// Expected failures (a handler that throws on purpose) would only clutter the test output.
const quietLogger = pino({ level: 'silent' });

busContract('in-process', {
  createBus: async () => createMemoryBus({ logger: quietLogger }),
  // An in-process bus is its own broker: the second party shares the same instance.
  createPeer: async (bus) => bus,
});
busTraceContextContract('in-process', {
  createBus: async () => createMemoryBus({ logger: quietLogger }),
  createPeer: async (bus) => bus,
});
