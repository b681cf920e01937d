import Anthropic from '@anthropic-ai/sdk';
import { createWorker, type Worker } from '@chunklog/agent-worker';
import { createSimulator, type Simulator } from '@chunklog/anthropic-sim';
import type { GatewayHarness } from '@chunklog/gateway/testing';
import { pino } from 'pino';

/**
 * A real worker on the gateway's store and bus, with the simulator as its model; `overrides`
 * replace its dependencies (tools, lease length).
 */
export async function startSimulatedWorker(
  gateway: GatewayHarness,
  overrides: Partial<Parameters<typeof createWorker>[0]> = {},
): Promise<{ worker: Worker; simulator: Simulator; close(): Promise<void> }> {
  const simulator = await createSimulator({ logger: () => {} });
  const worker = createWorker({
    store: gateway.backend.store,
    bus: gateway.backend.bus,
    anthropic: new Anthropic({ apiKey: 'simulator', baseURL: simulator.url, maxRetries: 0 }),
    workerId: `gateway-test-${crypto.randomUUID()}`,
    leaseMs: 5_000,
    maxSteps: 5,
    model: 'claude-sonnet-4-6',
    logger: pino({ level: 'silent' }),
    ...overrides,
  });
  await worker.start();
  return {
    worker,
    simulator,
    async close() {
      await worker.stop();
      await simulator.close();
    },
  };
}
