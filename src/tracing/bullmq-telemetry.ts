/**
 * BullMQ's own tracing (the `telemetry` option of Queue, Worker and FlowProducer) through the
 * bullmq-otel adapter, with three changes:
 *
 * - What a job carries never leaves the process: BullMQ records a job's return value
 *   (`bullmq.job.result`, on the "job completed" event) and its progress
 *   (`bullmq.job.progress`); both are dropped here. Job data is never recorded by BullMQ.
 * - A job's run whose job carries no trace context (added outside any trace, or delayed: see
 *   QueueRegistry.add) starts a trace of its own, whatever context the worker's loop happens to
 *   carry, and a context BullMQ reads back from a job is taken as the whole parent (never merged
 *   into the active one): a run belongs to exactly the trace its job names.
 * - Background loops run detached (`root`), so that the stalled-job check never joins a trace.
 *
 * This module imports nothing from bullmq at run time: it is loaded before the instrumented
 * modules (ioredis, which bullmq loads) by src/tracing/sdk.ts.
 */
import { ROOT_CONTEXT, SpanKind, type Context } from '@opentelemetry/api';
import { BullMQOtel } from 'bullmq-otel';
import type { Attributes, AttributeValue, ContextManager, Exception, Span, SpanOptions, Telemetry, Time, Tracer } from 'bullmq';

/** BullMQ attributes that hold what a job carries: its return value and its progress. */
export const DROPPED_JOB_ATTRIBUTES: ReadonlySet<string> = new Set(['bullmq.job.result', 'bullmq.job.progress']);

function withoutJobContent(attributes: Attributes | undefined): Attributes | undefined {
  if (!attributes) return attributes;
  let out: Attributes | undefined;
  for (const key in attributes) {
    if (!DROPPED_JOB_ATTRIBUTES.has(key)) continue;
    out ??= { ...attributes };
    delete out[key];
  }
  return out ?? attributes;
}

/** A BullMQ span that drops the attributes holding job content. */
export class RedactedSpan implements Span<Context> {
  constructor(private readonly inner: Span<Context>) {}
  setSpanOnContext(ctx: Context): Context {
    return this.inner.setSpanOnContext(ctx);
  }
  setAttribute(key: string, value: AttributeValue): void {
    if (!DROPPED_JOB_ATTRIBUTES.has(key)) this.inner.setAttribute(key, value);
  }
  setAttributes(attributes: Attributes): void {
    this.inner.setAttributes(withoutJobContent(attributes)!);
  }
  addEvent(name: string, attributes?: Attributes): void {
    this.inner.addEvent(name, withoutJobContent(attributes));
  }
  recordException(exception: Exception, time?: Time): void {
    this.inner.recordException(exception, time);
  }
  end(): void {
    this.inner.end();
  }
}

/** The Telemetry handed to every Queue, Worker and FlowProducer of a process with tracing on. */
export function bullmqTelemetry(version?: string): Telemetry<Context> {
  const base = new BullMQOtel({ tracerName: 'worker-platform/bullmq', ...(version ? { version } : {}) });
  const tracer: Tracer<Context> = {
    startSpan(name: string, options?: SpanOptions, ctx?: Context) {
      const parent = ctx ?? (options?.kind === SpanKind.CONSUMER ? ROOT_CONTEXT : undefined);
      return new RedactedSpan(base.tracer.startSpan(name, options, parent));
    },
  };
  const contextManager: ContextManager<Context> = {
    with: (ctx, fn) => base.contextManager.with(ctx, fn),
    active: () => base.contextManager.active(),
    root: () => ROOT_CONTEXT,
    getMetadata: (ctx) => base.contextManager.getMetadata(ctx),
    fromMetadata: (_active, metadata) => {
      try {
        return base.contextManager.fromMetadata(ROOT_CONTEXT, metadata);
      } catch {
        return ROOT_CONTEXT; // unreadable: the run starts a trace of its own
      }
    },
  };
  return { tracer, contextManager };
}
