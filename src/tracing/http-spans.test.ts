import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RequestWrapper } from '../http/request-wrapper.js';
import { silentLogger } from '../logging/logger.js';
import { Metrics } from '../metrics/metrics.js';
import { requestSpans } from './http-spans.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

describe('a server span per API request', () => {
  const wrapper = new RequestWrapper({ logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }), accessLog: false });
  const observe = requestSpans(trace.getTracer('test'));
  /** The span active where the handler ran, and where its body's last chunk arrived. */
  const active: { serve?: string; bodyEnd?: string } = {};
  const spanId = () => trace.getSpan(context.active())?.spanContext().spanId;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    // A stand-in for the dispatcher: routes /api/things/:id, answers 404 elsewhere, 500 on /api/broken.
    server = http.createServer((req, res) => {
      const ex = wrapper.begin(req, res);
      observe(ex, () => {
        active.serve = spanId();
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          active.bodyEnd = spanId();
          if (ex.pathname.startsWith('/api/things/')) {
            ex.route = '/api/things/:id';
            ex.reply({ status: 201, body: { ok: true } });
          } else if (ex.pathname === '/api/broken') {
            ex.route = '/api/broken';
            ex.fail(new Error('boom'));
          } else ex.reply({ status: 404, body: {} });
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => exporter.reset());
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await provider.shutdown();
  });

  const ended = async (n: number) => {
    for (let i = 0; i < 100 && exporter.getFinishedSpans().length < n; i++) await new Promise((r) => setTimeout(r, 10));
    return exporter.getFinishedSpans();
  };

  it('is named by method and declared route, records no URL, header or body, and is active while the request is handled', async () => {
    const res = await fetch(`${base}/api/things/42?token=s3cret-query`, {
      method: 'POST',
      headers: { authorization: 'Bearer s3cret-token', cookie: 'sid=s3cret-cookie', 'x-request-id': 'req-1' },
      body: JSON.stringify({ password: 's3cret-body' }),
    });
    expect(res.status).toBe(201);
    const [span] = await ended(1);
    expect(span!.name).toBe('POST /api/things/:id');
    expect(span!.attributes).toEqual({
      'http.request.method': 'POST',
      'worker_platform.request_id': 'req-1',
      'http.route': '/api/things/:id',
      'http.response.status_code': 201,
    });
    expect(JSON.stringify(span!.attributes)).not.toMatch(/s3cret|42/);
    expect(active).toEqual({ serve: span!.spanContext().spanId, bodyEnd: span!.spanContext().spanId });
  });

  it("joins the caller's trace when it sends a traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await fetch(`${base}/api/things/1`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    const [span] = await ended(1);
    expect(span!.spanContext().traceId).toBe(traceId);
    expect(span!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
  });

  it('names an unrouted request by its method only, and marks a 500 as an error', async () => {
    await fetch(`${base}/nowhere/at/all`);
    await fetch(`${base}/api/broken`);
    const spans = await ended(2);
    expect(spans.map((s) => [s.name, s.attributes['http.response.status_code'], s.attributes['http.route'], s.status.code])).toEqual([
      ['GET', 404, undefined, SpanStatusCode.UNSET],
      ['GET /api/broken', 500, '/api/broken', SpanStatusCode.ERROR],
    ]);
  });

  it('gives health probes and metric scrapes no span', async () => {
    for (const p of ['/healthz', '/readyz', '/metrics']) await fetch(base + p);
    await fetch(`${base}/api/things/2`); // the control: this one has its span
    const spans = await ended(1);
    expect(spans.map((s) => s.name)).toEqual(['GET /api/things/:id']);
  });
});
