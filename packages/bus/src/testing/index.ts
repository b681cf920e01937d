export { type BusContractSetup, busContract } from './bus-contract';
export { busTraceContextContract } from './trace-context-contract';
