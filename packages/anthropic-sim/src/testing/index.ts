export { type SimulatorClient, useSimulatorClient } from './simulator-client';
