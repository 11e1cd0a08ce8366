/**
 * The tracing SDK in a process of its own, as the platform's entries start it (startTracing
 * before the modules it instruments), with the platform's queue registry and worker factory, in
 * the http/json encoding (the e2e test, test/e2e/tracing.test.ts, covers the default protobuf):
 * a job's run is a span in the trace that added it, with its Redis commands under it; a delayed
 * job runs in a trace of its own, one brought forward does its work in the caller's trace; a job added in a caller's trace carries its trace context, never a client's
 * baggage; a job's return value is not exported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTLP_KIND, startOtlpReceiver, traceOf, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { spawnTsProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';

const RESULT_SECRET = 'job-result-secret-5e1d';

describe('tracing export (http/json) through the queue registry and the worker factory', () => {
  let redis: TestRedis;
  let receiver: OtlpReceiver;
  let spans: ReceivedSpan[];
  let output: string;

  beforeAll(async () => {
    [redis, receiver] = await Promise.all([startTestRedis(), startOtlpReceiver()]);
    const child = await spawnTsProcess(
      'test/fixtures/tracing/traced-jobs.ts',
      [],
      { REDIS_URL: redis.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', WP_RESULT_SECRET: RESULT_SECRET },
      { name: 'traced-jobs', ready: (out) => /^(done|incomplete.*)$/m.test(out), startTimeoutMs: 90_000 },
    );
    expect(child.output()).toMatch(/^done$/m);
    await child.exited;
    spans = receiver.spans();
    output = child.output();
  });
  afterAll(async () => {
    await receiver?.stop();
    await redis?.destroy();
  });

  const run = (name: string) =>
    spans.find((s) => s.kind === OTLP_KIND.consumer && s.name === 'process maintenance' && s.attributes['bullmq.job.name'] === name);
  const added = (name: string) => spans.find((s) => s.kind === OTLP_KIND.producer && s.name === `add maintenance.${name}`);

  it('exports in JSON, and runs a job in the trace that added it, its Redis commands under it', () => {
    expect(receiver.requests().every((r) => r.contentType === 'application/json')).toBe(true);
    const [add, process] = [added('now')!, run('now')!];
    expect(add.parentSpanId).toBeUndefined();
    expect(process.traceId).toBe(add.traceId);
    const trace = traceOf(spans, add.traceId);
    expect(trace.ancestors(process)).toContain(add);
    expect(trace.spans.some((s) => s.kind === OTLP_KIND.client && s.attributes['db.system.name'] === 'redis' && trace.ancestors(s).includes(process))).toBe(
      true,
    );
    expect(process.resource).toMatchObject({ 'service.name': 'worker-platform', 'worker_platform.roles': 'probe' });
  });

  it("runs a delayed job in a trace of its own; one brought forward does its work in the caller's trace, under the promote span", () => {
    const later = run('later')!;
    expect(later.parentSpanId).toBeUndefined();
    expect(later.traceId).not.toBe(added('later')!.traceId);

    const caller = spans.find((s) => s.name === 'caller')!;
    const trace = traceOf(spans, caller.traceId);
    const promoted = trace.spans.find(
      (s) => s.kind === OTLP_KIND.consumer && s.name === 'process maintenance' && s.attributes['bullmq.job.name'] === 'promoted',
    );
    expect(promoted, "the promoted run in the caller's trace").toBeDefined();
    expect(trace.ancestors(promoted!).map((s) => s.name)).toEqual(['promote maintenance', 'caller']);
    expect(trace.ancestors(promoted!)[0]!.attributes['bullmq.job.id']).toBe(promoted!.attributes['bullmq.job.id']);
    // BullMQ's own span of the run stays in the job's trace.
    const runs = spans.filter((s) => s.kind === OTLP_KIND.consumer && s.name === 'process maintenance' && s.attributes['bullmq.job.name'] === 'promoted');
    expect(runs.map((s) => s.traceId === caller.traceId).sort()).toEqual([false, true]);
  });

  it("runs a job added in a caller's trace there, carrying the W3C trace context and no baggage the caller had", () => {
    const within = run('within')!;
    const caller = spans.find((s) => s.name === 'caller')!;
    expect(within.traceId).toBe(caller.traceId);
    expect(traceOf(spans, caller.traceId).ancestors(within)).toContain(caller);
    const recorded = JSON.parse(/^within job's trace context: (.*)$/m.exec(output)![1]!);
    expect(recorded).toEqual({ traceparent: expect.stringMatching(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`)) });
  });

  it("exports no job's return value", () => {
    expect(Buffer.concat(receiver.requests().map((r) => r.body)).toString('utf8')).not.toContain(RESULT_SECRET);
    // Four runs, and the promoted one's work in its caller's trace.
    expect(spans.filter((s) => s.name === 'process maintenance')).toHaveLength(5);
  });
});
