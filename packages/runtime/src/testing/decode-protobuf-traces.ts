/**
 * Reads an OTLP `ExportTraceServiceRequest` in the protobuf encoding (what the SDK's
 * http/protobuf exporter sends): the fields a test looks at, nothing more. A hand-written walk
 * over the wire format (varints, length-delimited fields), so the test receiver needs no
 * protobuf library.
 */

/** A value of a span or resource attribute. */
export type OtlpAttributeValue = string | number | boolean;

/** One span as the receiver keeps it, ids as lower-case hex. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, OtlpAttributeValue>;
}

/** The spans of one resource (one exporting process). */
export interface OtlpResourceSpans {
  resource: Record<string, OtlpAttributeValue>;
  /** Empty when only counted. */
  spans: OtlpSpan[];
  count: number;
}

const textDecoder = new TextDecoder();

class WireReader {
  position: number;

  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.position = start;
  }

  get done(): boolean {
    return this.position >= this.end;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.position >= this.end) throw new Error('truncated varint');
      const byte = this.bytes[this.position++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wireType: number } {
    const tag = this.varint();
    return { field: Math.floor(tag / 8), wireType: tag & 7 };
  }

  /** A length-delimited field's bounds; the reader moves past it. */
  delimited(): { start: number; end: number } {
    const length = this.varint();
    const start = this.position;
    this.position += length;
    if (this.position > this.end) throw new Error('truncated field');
    return { start, end: this.position };
  }

  nested(): WireReader {
    const { start, end } = this.delimited();
    return new WireReader(this.bytes, start, end);
  }

  string(): string {
    const { start, end } = this.delimited();
    return textDecoder.decode(this.bytes.subarray(start, end));
  }

  hex(): string {
    const { start, end } = this.delimited();
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + start, end - start).toString(
      'hex',
    );
  }

  double(): number {
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.position, 8);
    this.position += 8;
    return view.getFloat64(0, true);
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.position += 8;
    else if (wireType === 2) this.delimited();
    else if (wireType === 5) this.position += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

/** AnyValue: string 1, bool 2, int 3, double 4; arrays, maps and bytes are left out. */
function readAnyValue(reader: WireReader): OtlpAttributeValue | undefined {
  let value: OtlpAttributeValue | undefined;
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (field === 1 && wireType === 2) value = reader.string();
    else if (field === 2 && wireType === 0) value = reader.varint() !== 0;
    else if (field === 3 && wireType === 0) value = reader.varint();
    else if (field === 4 && wireType === 1) value = reader.double();
    else reader.skip(wireType);
  }
  return value;
}

/** KeyValue: key 1, value 2; added to `into`. */
function readKeyValue(reader: WireReader, into: Record<string, OtlpAttributeValue>): void {
  let key: string | undefined;
  let value: OtlpAttributeValue | undefined;
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (field === 1 && wireType === 2) key = reader.string();
    else if (field === 2 && wireType === 2) value = readAnyValue(reader.nested());
    else reader.skip(wireType);
  }
  if (key !== undefined && value !== undefined) into[key] = value;
}

/** Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9. */
function readSpan(reader: WireReader): OtlpSpan {
  const span: OtlpSpan = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    name: '',
    kind: 0,
    attributes: {},
  };
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (field === 1 && wireType === 2) span.traceId = reader.hex();
    else if (field === 2 && wireType === 2) span.spanId = reader.hex();
    else if (field === 4 && wireType === 2) span.parentSpanId = reader.hex();
    else if (field === 5 && wireType === 2) span.name = reader.string();
    else if (field === 6 && wireType === 0) span.kind = reader.varint();
    else if (field === 9 && wireType === 2) readKeyValue(reader.nested(), span.attributes);
    else reader.skip(wireType);
  }
  return span;
}

/**
 * The resource spans of a protobuf `ExportTraceServiceRequest` (resource_spans 1; in each,
 * resource 1 and scope_spans 2; in each of those, spans 2). `countOnly` skips the resources'
 * and the spans' contents: the entries have a count and no spans.
 */
export function decodeProtobufTraces(
  bytes: Uint8Array,
  options: { countOnly?: boolean } = {},
): OtlpResourceSpans[] {
  const countOnly = options.countOnly ?? false;
  const request = new WireReader(bytes);
  const found: OtlpResourceSpans[] = [];
  while (!request.done) {
    const { field, wireType } = request.tag();
    if (field !== 1 || wireType !== 2) {
      request.skip(wireType);
      continue;
    }
    const resourceSpans = request.nested();
    const entry: OtlpResourceSpans = { resource: {}, spans: [], count: 0 };
    while (!resourceSpans.done) {
      const inner = resourceSpans.tag();
      if (inner.field === 1 && inner.wireType === 2 && !countOnly) {
        const resource = resourceSpans.nested();
        while (!resource.done) {
          const attribute = resource.tag();
          if (attribute.field === 1 && attribute.wireType === 2) {
            readKeyValue(resource.nested(), entry.resource);
          } else resource.skip(attribute.wireType);
        }
      } else if (inner.field === 2 && inner.wireType === 2) {
        const scopeSpans = resourceSpans.nested();
        while (!scopeSpans.done) {
          const spanTag = scopeSpans.tag();
          if (spanTag.field === 2 && spanTag.wireType === 2) {
            entry.count += 1;
            if (countOnly) scopeSpans.skip(spanTag.wireType);
            else entry.spans.push(readSpan(scopeSpans.nested()));
          } else scopeSpans.skip(spanTag.wireType);
        }
      } else resourceSpans.skip(inner.wireType);
    }
    found.push(entry);
  }
  return found;
}
