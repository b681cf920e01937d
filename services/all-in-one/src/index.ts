export { type AllInOneConfig, isLoopbackHost, parseAllInOneConfig } from './all-in-one-config';
export { bootstrapApiKeys } from './bootstrap-api-keys';
export { type AllInOne, startAllInOne } from './start-all-in-one';
