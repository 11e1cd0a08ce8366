/**
 * The tracing SDK in a process of its own, as the platform's entries start it (startTracing
 * before the modules it instruments), with the platform's queue registry and worker factory, in
 * the http/json encoding (the e2e test, test/e2e/tracing.test.ts, covers the default protobuf):
 * a job's run is a span in the trace that added it, with its Redis commands under it; a delayed
 * job runs in a trace of its own, and so does one brought forward (a promote span in the caller's
 * trace names it); a job added in a caller's trace carries its trace context, never a client's
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

  it("runs a delayed job in a trace of its own, and one brought forward too, named by a promote span in the caller's trace", () => {
    const later = run('later')!;
    expect(later.parentSpanId).toBeUndefined();
    expect(later.traceId).not.toBe(added('later')!.traceId);

    const caller = spans.find((s) => s.name === 'caller')!;
    const promote = traceOf(spans, caller.traceId).spans.find((s) => s.name === 'promote maintenance')!;
    expect(promote.parentSpanId).toBe(caller.spanId);
    const promoted = run('promoted')!;
    expect(promote.attributes['bullmq.job.id']).toBe(promoted.attributes['bullmq.job.id']);
    expect(promoted.traceId).not.toBe(caller.traceId);
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
    expect(spans.filter((s) => s.name === 'process maintenance')).toHaveLength(4);
  });
});
