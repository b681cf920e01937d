export { type BusContractSetup, busContract } from './bus-contract';
