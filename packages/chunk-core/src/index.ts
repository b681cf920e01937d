export * from './chunk';
export * from './errors';
export * from './events';
export * from './tab';
