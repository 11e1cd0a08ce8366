import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { platformSampler } from './sampler.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const decide = (ratio: number, kind: SpanKind, parent = ROOT_CONTEXT) => platformSampler(ratio).shouldSample(parent, TRACE, 'span', kind, {}, []).decision;
const under = (flags: TraceFlags) => trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: 'b7ad6b7169203331', traceFlags: flags, isRemote: true });

describe('which traces are recorded', () => {
  it('begins traces for requests and job work, never for background polling', () => {
    for (const kind of [SpanKind.SERVER, SpanKind.PRODUCER, SpanKind.CONSUMER]) expect(decide(1, kind)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    // A worker's idle poll, the stalled-job check (INTERNAL); a command outside any request or job (CLIENT).
    for (const kind of [SpanKind.INTERNAL, SpanKind.CLIENT]) expect(decide(1, kind)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('keeps the ratio of new traces, and a span joining a trace follows that trace', () => {
    expect(decide(0, SpanKind.SERVER)).toBe(SamplingDecision.NOT_RECORD);
    for (const kind of [SpanKind.INTERNAL, SpanKind.CLIENT, SpanKind.CONSUMER]) {
      expect(decide(0, kind, under(TraceFlags.SAMPLED))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
      expect(decide(1, kind, under(TraceFlags.NONE))).toBe(SamplingDecision.NOT_RECORD);
    }
  });
});
