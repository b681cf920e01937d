export * from './chunk';
export * from './commands';
export * from './errors';
export * from './events';
export * from './tab';
export * from './validate-request';
export * from './wire-types';
