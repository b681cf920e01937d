/** What the standard `OTEL_*` variables ask of tracing: off, or exported over OTLP. */
export type TracingRequest = { enabled: false; reason: string } | { enabled: true };

/**
 * Reads the OpenTelemetry variables that decide whether spans are exported at all. Tracing is
 * on with an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
 * or `OTEL_TRACES_EXPORTER=otlp` (the SDK's default endpoint, http://localhost:4318), and off
 * otherwise, with `OTEL_SDK_DISABLED=true`, or with `OTEL_TRACES_EXPORTER=none`. The exporter,
 * sampler, batch and resource variables are read by the SDK itself.
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
  if (exporters.includes('otlp')) return { enabled: true };
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint !== undefined && endpoint.trim() !== '') return { enabled: true };
  return { enabled: false, reason: 'no OTEL_EXPORTER_OTLP_ENDPOINT' };
}
