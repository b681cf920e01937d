import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll } from 'vitest';
import { createSimulator, type Simulator, type SimulatorOptions } from '../create-simulator';

/** The simulator a suite runs against and the real SDK's client pointed at it. */
export interface SimulatorClient {
  simulator: Simulator;
  client: Anthropic;
}

/**
 * A simulator (quiet unless `options.logger` is given) and an SDK client on it for the calling
 * suite: started before its tests, closed after them. The client does not retry unless
 * `maxRetries` says so.
 */
export function useSimulatorClient(
  options: SimulatorOptions = {},
  { maxRetries = 0 }: { maxRetries?: number } = {},
): SimulatorClient {
  const suite = {} as SimulatorClient;
  beforeAll(async () => {
    suite.simulator = await createSimulator({ logger: () => {}, ...options });
    suite.client = new Anthropic({ baseURL: suite.simulator.url, apiKey: 'test', maxRetries });
  });
  afterAll(async () => {
    await suite.simulator?.close();
  });
  return suite;
}
