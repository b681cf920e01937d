export {
  createSimulator,
  type Simulator,
  type SimulatorOptions,
  type SimulatorRequest,
} from './create-simulator';
export { type Clock, createManualClock, type ManualClock } from './manual-clock';
