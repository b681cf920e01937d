export { type AllInOneConfig, isLoopbackHost, parseAllInOneConfig } from './all-in-one-config';
export { type AllInOne, startAllInOne } from './start-all-in-one';
