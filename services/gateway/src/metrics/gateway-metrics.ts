import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export type StreamTransport = 'sse' | 'ws';

/**
 * The gateway's Prometheus instruments, on a registry that composed services may add to. Each
 * counts what this gateway did itself (requests it answered, events it relayed, streams it cut),
 * so summing over the gateways of a deployment is right; turns and tokens are counted by the
 * workers that run them (`chunklog_worker_*`).
 */
export interface GatewayMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  streamConnections: Gauge<'transport'>;
  eventsRelayed: Counter<'transport' | 'event'>;
  streamsCutOff: Counter<'transport' | 'reason'>;
  sealDelay: Histogram;
}

export function createGatewayMetrics(registry = new Registry()): GatewayMetrics {
  return {
    registry,
    httpRequests: new Counter({
      name: 'chunklog_http_requests_total',
      help: 'HTTP requests answered, by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'chunklog_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    streamConnections: new Gauge({
      name: 'chunklog_stream_connections',
      help: 'Open live-event streams, by transport',
      labelNames: ['transport'],
      registers: [registry],
    }),
    eventsRelayed: new Counter({
      name: 'chunklog_events_relayed_total',
      help: 'Events written to stream clients, by transport and event name',
      labelNames: ['transport', 'event'],
      registers: [registry],
    }),
    streamsCutOff: new Counter({
      name: 'chunklog_streams_cut_off_total',
      help: 'Streams ended by the gateway, by reason (slow_client, shutdown, error)',
      labelNames: ['transport', 'reason'],
      registers: [registry],
    }),
    sealDelay: new Histogram({
      name: 'chunklog_seal_relay_delay_seconds',
      help: 'Chunk committed (createdAt) to its live seal reaching this gateway',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  };
}
