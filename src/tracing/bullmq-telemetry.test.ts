import { context, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { bullmqTelemetry } from './bullmq-telemetry.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
const telemetry = bullmqTelemetry();
const { tracer, contextManager } = telemetry;

describe("BullMQ's telemetry as the platform hands it to BullMQ", () => {
  beforeEach(() => exporter.reset());
  afterAll(() => provider.shutdown());

  it('drops what a job carries (its result and progress) and keeps the rest', () => {
    const span = tracer.startSpan('process crawl', { kind: SpanKind.CONSUMER });
    span.setAttributes({ 'bullmq.job.id': 'ip1-a', 'bullmq.job.progress': '{"items":3}' });
    span.setAttribute('bullmq.job.result', '{"items":[{"title":"secret"}]}');
    span.addEvent('job completed', { 'bullmq.job.result': '{"items":[]}', 'bullmq.job.attempts.made': 1 });
    span.end();
    const [done] = exporter.getFinishedSpans();
    expect(done!.attributes).toEqual({ 'bullmq.job.id': 'ip1-a' });
    expect(done!.events.map((e) => [e.name, e.attributes])).toEqual([['job completed', { 'bullmq.job.attempts.made': 1 }]]);
  });

  it("runs a job in the trace its metadata names, whatever context the worker's loop carries", () => {
    const adder = trace.getTracer('t').startSpan('add crawl.crawl', { kind: SpanKind.PRODUCER });
    const metadata = contextManager.getMetadata(trace.setSpan(context.active(), adder));
    adder.end();
    const leaked = trace.getTracer('t').startSpan('an earlier job');
    context.with(trace.setSpan(context.active(), leaked), () => {
      tracer.startSpan('process crawl', { kind: SpanKind.CONSUMER }, contextManager.fromMetadata(contextManager.active(), metadata)).end();
      // Without metadata (a delayed job, a periodic run), a trace of its own.
      tracer.startSpan('process maintenance', { kind: SpanKind.CONSUMER }).end();
      // Unreadable metadata: the same, rather than a failed job.
      tracer.startSpan('process pool-refill', { kind: SpanKind.CONSUMER }, contextManager.fromMetadata(contextManager.active(), '{not json')).end();
    });
    leaked.end();
    const byName = new Map(exporter.getFinishedSpans().map((s) => [s.name, s]));
    const run = byName.get('process crawl')!;
    expect(run.spanContext().traceId).toBe(adder.spanContext().traceId);
    expect(run.parentSpanContext?.spanId).toBe(adder.spanContext().spanId);
    for (const name of ['process maintenance', 'process pool-refill']) {
      const own = byName.get(name)!;
      expect(own.parentSpanContext).toBeUndefined();
      expect(own.spanContext().traceId).not.toBe(leaked.spanContext().traceId);
    }
  });

  it('runs background loops detached from any trace', () => {
    const span = trace.getTracer('t').startSpan('a request');
    const inside = context.with(trace.setSpan(context.active(), span), () => contextManager.root!());
    span.end();
    expect(trace.getSpan(inside)).toBeUndefined();
  });
});
