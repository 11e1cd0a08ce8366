/**
 * Which traces are recorded. A span that joins a trace (a job's run under the request that added
 * it, a query under its job) follows that trace's decision. A span that would begin a trace is
 * recorded when it is work someone asked for: a request (SERVER), a job added (PRODUCER) or run
 * (CONSUMER) outside any trace, at OTEL_TRACES_SAMPLER_ARG's ratio. Roots that are the
 * platform's own background polling are never recorded: a worker's idle poll and the stalled-job
 * check (BullMQ's INTERNAL spans), and a command or query outside any request or job (CLIENT:
 * heartbeats, lease renewals, the dependency monitor), which would otherwise be most of the
 * traces. Ancestors are never dropped for it: a job added from a recorded trace carries it.
 */
import { SpanKind, type Attributes, type Context, type Link } from '@opentelemetry/api';
import { ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace-node';

const BACKGROUND_ROOTS: ReadonlySet<SpanKind> = new Set([SpanKind.INTERNAL, SpanKind.CLIENT]);

/** Decides for spans without a parent (ParentBasedSampler's root). */
export class RootSampler implements Sampler {
  private readonly ratio: Sampler;

  constructor(ratio: number) {
    this.ratio = new TraceIdRatioBasedSampler(ratio);
  }

  shouldSample(context: Context, traceId: string, spanName: string, spanKind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (BACKGROUND_ROOTS.has(spanKind)) return { decision: SamplingDecision.NOT_RECORD };
    return this.ratio.shouldSample(context, traceId, spanName, spanKind, attributes, links);
  }

  toString(): string {
    return `RootSampler{requests and jobs, ${this.ratio.toString()}}`;
  }
}

export function platformSampler(ratio: number): Sampler {
  return new ParentBasedSampler({ root: new RootSampler(ratio) });
}
