export { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver';
export { type MemoryTracing, startMemoryTracing } from './start-memory-tracing';
