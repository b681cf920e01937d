/** The OTLP encodings over HTTP that chunklog exports in. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** What the standard `OTEL_*` variables ask of tracing: off, or exported over OTLP. */
export type TracingRequest =
  | { enabled: false; reason: string }
  | { enabled: true; protocol: OtlpProtocol };

/**
 * Reads the OpenTelemetry variables that decide whether spans are exported at all (the rules
 * are in docs/configuration.md); `grpc` is not supported, so tracing then stays off and says
 * so. The SDK reads the exporter's other variables, the sampler, batch and resource ones itself.
 */
export function readTracingRequest(env: NodeJS.ProcessEnv): TracingRequest {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') {
    return { enabled: false, reason: 'OTEL_SDK_DISABLED=true' };
  }
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (exporters.includes('none')) return { enabled: false, reason: 'OTEL_TRACES_EXPORTER=none' };
  if (exporters.length > 0 && !exporters.includes('otlp')) {
    return {
      enabled: false,
      reason: `OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER} (only otlp is supported)`,
    };
  }
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporters.includes('otlp') && (endpoint === undefined || endpoint.trim() === '')) {
    return { enabled: false, reason: 'no OTEL_EXPORTER_OTLP_ENDPOINT' };
  }
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = (env[protocolVariable]?.trim() || 'http/protobuf').toLowerCase();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    return {
      enabled: false,
      reason: `${protocolVariable}=${env[protocolVariable]} (only http/protobuf and http/json are supported)`,
    };
  }
  return { enabled: true, protocol };
}
