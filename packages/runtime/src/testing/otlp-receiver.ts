/**
 * A minimal OTLP/HTTP trace receiver, both encodings (http/protobuf, the exporters' default, and
 * http/json): the spans child processes export, flattened, for tests to read.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { decodeProtobufTraces, type OtlpResourceSpans } from './decode-protobuf-traces';

const AnyValueSchema = z.object({
  stringValue: z.string().optional(),
  intValue: z.union([z.number(), z.string()]).optional(),
  boolValue: z.boolean().optional(),
  doubleValue: z.number().optional(),
});
const KeyValueListSchema = z
  .array(z.object({ key: z.string(), value: AnyValueSchema }))
  .optional()
  .default([]);
const ExportRequestSchema = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: KeyValueListSchema }).optional(),
      scopeSpans: z.array(
        z.object({
          spans: z.array(
            z.object({
              traceId: z.string(),
              spanId: z.string(),
              parentSpanId: z.string().optional(),
              name: z.string(),
              kind: z.number().optional(),
              attributes: KeyValueListSchema,
            }),
          ),
        }),
      ),
    }),
  ),
});

/** One exported span, its attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** The spans received so far (none kept with `keepSpans: false`). */
  spans(): ReceivedSpan[];
  /** How many spans were received. */
  count(): number;
  close(): Promise<void>;
}

function plain(
  list: z.infer<typeof KeyValueListSchema>,
): Record<string, string | number | boolean> {
  const values: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    const found =
      value.stringValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue)) ??
      value.boolValue ??
      value.doubleValue;
    if (found !== undefined) values[key] = found;
  }
  return values;
}

const CountSchema = z.object({
  resourceSpans: z.array(
    z.object({ scopeSpans: z.array(z.object({ spans: z.array(z.unknown()) })) }),
  ),
});

/**
 * The resource spans of a JSON export request; undefined when it is not one. `countOnly` checks
 * only the nesting down to the spans: the entries have a count and no spans.
 */
function decodeJsonTraces(body: Buffer, countOnly: boolean): OtlpResourceSpans[] | undefined {
  const json: unknown = JSON.parse(body.toString());
  if (countOnly) {
    const counted = CountSchema.safeParse(json);
    if (!counted.success) return undefined;
    return counted.data.resourceSpans.map((resourceSpans) => ({
      resource: {},
      spans: [],
      count: resourceSpans.scopeSpans.reduce((sum, scope) => sum + scope.spans.length, 0),
    }));
  }
  const parsed = ExportRequestSchema.safeParse(json);
  if (!parsed.success) return undefined;
  return parsed.data.resourceSpans.map((resourceSpans) => {
    const spans = resourceSpans.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind ?? 0,
        attributes: plain(span.attributes),
      })),
    );
    return {
      resource: plain(resourceSpans.resource?.attributes ?? []),
      spans,
      count: spans.length,
    };
  });
}

/**
 * Listens on a free loopback port for `POST /v1/traces`, protobuf or JSON by the request's
 * content type. `keepSpans: false` only counts them, without reading their contents (a
 * benchmark's long run).
 */
export async function startOtlpReceiver(
  options: { keepSpans?: boolean } = {},
): Promise<OtlpReceiver> {
  const keepSpans = options.keepSpans ?? true;
  const received: ReceivedSpan[] = [];
  let count = 0;
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(parts);
      const protobuf = request.headers['content-type'] === 'application/x-protobuf';
      let decoded: OtlpResourceSpans[] | undefined;
      try {
        decoded = protobuf
          ? decodeProtobufTraces(body, { countOnly: !keepSpans })
          : decodeJsonTraces(body, !keepSpans);
      } catch {
        decoded = undefined;
      }
      if (decoded === undefined) {
        response.writeHead(400).end();
        return;
      }
      for (const { resource, spans, count: spanCount } of decoded) {
        count += spanCount;
        for (const span of spans) {
          received.push({
            service: String(resource['service.name']),
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId,
            name: span.name,
            attributes: span.attributes,
          });
        }
      }
      // An empty ExportTraceServiceResponse in the request's encoding.
      if (protobuf) response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    count: () => count,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
