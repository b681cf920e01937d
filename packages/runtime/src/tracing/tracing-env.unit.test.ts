import { describe, expect, it } from 'vitest';
import { readTracingRequest } from './tracing-env';

describe('readTracingRequest', () => {
  it('is off without any OTEL_ variable', () => {
    expect(readTracingRequest({}).enabled).toBe(false);
  });

  it('is on with an OTLP endpoint, for all signals or for traces', () => {
    expect(readTracingRequest({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      enabled: true,
      protocol: 'http/protobuf',
    });
    expect(
      readTracingRequest({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }),
    ).toEqual({ enabled: true, protocol: 'http/protobuf' });
  });

  it('is on with OTEL_TRACES_EXPORTER=otlp and no endpoint (the default one)', () => {
    expect(readTracingRequest({ OTEL_TRACES_EXPORTER: 'otlp' }).enabled).toBe(true);
  });

  it('is off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, endpoint or not', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(readTracingRequest({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).enabled).toBe(false);
    expect(readTracingRequest({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled).toBe(false);
  });

  it('exports protobuf unless http/json is asked for, the traces variable first', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(readTracingRequest({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({
      enabled: true,
      protocol: 'http/json',
    });
    expect(
      readTracingRequest({
        ...endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
    ).toEqual({ enabled: true, protocol: 'http/protobuf' });
  });

  it('is off, saying why, over gRPC', () => {
    expect(
      readTracingRequest({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toEqual({
      enabled: false,
      reason: 'OTEL_EXPORTER_OTLP_PROTOCOL=grpc (only http/protobuf and http/json are supported)',
    });
  });

  it('is off, saying why, with an exporter other than otlp', () => {
    expect(readTracingRequest({ OTEL_TRACES_EXPORTER: 'zipkin' })).toEqual({
      enabled: false,
      reason: 'OTEL_TRACES_EXPORTER=zipkin (only otlp is supported)',
    });
  });
});
