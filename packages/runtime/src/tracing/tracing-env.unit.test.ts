import { describe, expect, it } from 'vitest';
import { readTracingRequest } from './tracing-env';

describe('readTracingRequest', () => {
  it('is off without any OTEL_ variable', () => {
    expect(readTracingRequest({}).enabled).toBe(false);
  });

  it('is on with an OTLP endpoint, for all signals or for traces', () => {
    expect(readTracingRequest({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      enabled: true,
    });
    expect(
      readTracingRequest({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }),
    ).toEqual({ enabled: true });
  });

  it('is on with OTEL_TRACES_EXPORTER=otlp and no endpoint (the default one)', () => {
    expect(readTracingRequest({ OTEL_TRACES_EXPORTER: 'otlp' }).enabled).toBe(true);
  });

  it('is off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, endpoint or not', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(readTracingRequest({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).enabled).toBe(false);
    expect(readTracingRequest({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled).toBe(false);
  });

  it('is off, saying why, with an exporter other than otlp', () => {
    expect(readTracingRequest({ OTEL_TRACES_EXPORTER: 'zipkin' })).toEqual({
      enabled: false,
      reason: 'OTEL_TRACES_EXPORTER=zipkin (only otlp is supported)',
    });
  });
});
