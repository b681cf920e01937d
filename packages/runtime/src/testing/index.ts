export { type MemoryTracing, startMemoryTracing } from './start-memory-tracing';
