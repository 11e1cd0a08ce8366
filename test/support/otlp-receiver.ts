/**
 * A loopback OTLP/HTTP trace receiver: what a collector would get from the platform. It listens on
 * 127.0.0.1 (any free port), accepts `POST /v1/traces` in either encoding the exporter speaks
 * (http/protobuf, the default, and http/json), answers as a collector does (200 with an empty
 * ExportTraceServiceResponse), keeps every raw body (to search for what must never be exported)
 * and decodes the spans: ids, parent, name, kind, attributes, events, and their resource's
 * attributes. The protobuf decoding reads only the fields it names (the OTLP trace proto,
 * opentelemetry/proto/trace/v1/trace.proto) and skips the rest.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean | null;
export type Attributes = Record<string, AttributeValue>;

/** OTLP's span kinds (SPAN_KIND_*): one more than the API's SpanKind. */
export const OTLP_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Attributes;
  events: { name: string; attributes: Attributes }[];
  /** The attributes of the exporting process (service.name, service.instance.id, ...). */
  resource: Attributes;
  scope: string;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans(): ReceivedSpan[];
  /** Every export request: its content type and raw body. */
  requests(): { contentType: string; body: Buffer }[];
  stop(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: { contentType: string; body: Buffer }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type'] ?? '');
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      requests.push({ contentType, body });
      try {
        const json = contentType.includes('json');
        spans.push(...(json ? decodeJson(JSON.parse(body.toString('utf8'))) : decodeProtobuf(body)));
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : undefined);
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    requests: () => [...requests],
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- http/json (the exporter writes ids as hex) ----

interface JsonKeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number };
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Attributes {
  const out: Attributes = {};
  for (const kv of list ?? []) {
    const v = kv.value ?? {};
    out[kv.key] = v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? null));
  }
  return out;
}

function decodeJson(request: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: Number(s.kind ?? 0),
          attributes: jsonAttributes(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
          resource,
          scope: ss.scope?.name ?? '',
        });
      }
    }
  }
  return out;
}

// ---- http/protobuf ----

/** Fields of one protobuf message: field number → raw values (varints as numbers, the rest as bytes). */
function fields(buf: Uint8Array): Map<number, (number | Uint8Array)[]> {
  const out = new Map<number, (number | Uint8Array)[]>();
  let pos = 0;
  const varint = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const byte = buf[pos++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return result;
      shift += 7;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const [field, wire] = [Math.floor(tag / 8), tag & 7];
    let value: number | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 1) value = buf.subarray(pos, (pos += 8));
    else if (wire === 2) {
      const len = varint();
      value = buf.subarray(pos, (pos += len));
    } else if (wire === 5) value = buf.subarray(pos, (pos += 4));
    else throw new Error(`unsupported wire type ${wire}`);
    if (pos > buf.length) throw new Error('truncated field');
    let list = out.get(field);
    if (!list) out.set(field, (list = []));
    list.push(value);
  }
  return out;
}

const utf8 = new TextDecoder();
const bytesOf = (m: Map<number, (number | Uint8Array)[]>, f: number) => (m.get(f) ?? []) as Uint8Array[];
const text = (m: Map<number, (number | Uint8Array)[]>, f: number) => {
  const b = bytesOf(m, f)[0];
  return b ? utf8.decode(b) : '';
};
const hex = (b: Uint8Array | undefined) => (b && b.length ? Buffer.from(b).toString('hex') : undefined);

/** AnyValue: 1 string, 2 bool, 3 int, 4 double. */
function anyValue(buf: Uint8Array): AttributeValue {
  const m = fields(buf);
  if (m.has(1)) return text(m, 1);
  if (m.has(2)) return m.get(2)![0] === 1;
  if (m.has(3)) return m.get(3)![0] as number;
  if (m.has(4)) return Buffer.from(m.get(4)![0] as Uint8Array).readDoubleLE(0);
  return null;
}

/** repeated KeyValue {1 key, 2 value}. */
function pbAttributes(list: Uint8Array[]): Attributes {
  const out: Attributes = {};
  for (const kv of list) {
    const m = fields(kv);
    const value = bytesOf(m, 2)[0];
    out[text(m, 1)] = value ? anyValue(value) : null;
  }
  return out;
}

/** ExportTraceServiceRequest {1 ResourceSpans}; ResourceSpans {1 Resource {1 attributes}, 2 ScopeSpans {1 scope {1 name}, 2 Span}}. */
function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rsBuf of bytesOf(fields(body), 1)) {
    const rs = fields(rsBuf);
    const resourceBuf = bytesOf(rs, 1)[0];
    const resource = resourceBuf ? pbAttributes(bytesOf(fields(resourceBuf), 1)) : {};
    for (const ssBuf of bytesOf(rs, 2)) {
      const ss = fields(ssBuf);
      const scopeBuf = bytesOf(ss, 1)[0];
      const scope = scopeBuf ? text(fields(scopeBuf), 1) : '';
      // Span {1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 11 events {2 name, 3 attributes}}
      for (const spanBuf of bytesOf(ss, 2)) {
        const s = fields(spanBuf);
        out.push({
          traceId: hex(bytesOf(s, 1)[0])!,
          spanId: hex(bytesOf(s, 2)[0])!,
          parentSpanId: hex(bytesOf(s, 4)[0]),
          name: text(s, 5),
          kind: (s.get(6)?.[0] as number | undefined) ?? 0,
          attributes: pbAttributes(bytesOf(s, 9)),
          events: bytesOf(s, 11).map((e) => {
            const ev = fields(e);
            return { name: text(ev, 2), attributes: pbAttributes(bytesOf(ev, 3)) };
          }),
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

/** The spans of one trace, and a span's ancestors in it (nearest first). */
export function traceOf(spans: ReceivedSpan[], traceId: string): { spans: ReceivedSpan[]; ancestors(span: ReceivedSpan): ReceivedSpan[] } {
  const inTrace = spans.filter((s) => s.traceId === traceId);
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  return {
    spans: inTrace,
    ancestors(span) {
      const chain: ReceivedSpan[] = [];
      const parentOf = (s: ReceivedSpan) => (s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId));
      for (let p = parentOf(span); p && !chain.includes(p); p = parentOf(p)) chain.push(p);
      return chain;
    },
  };
}
