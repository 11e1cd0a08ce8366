/**
 * Running a delayed job now on someone's behalf, in their trace. With tracing on, a delayed job
 * runs in a trace of its own (QueueRegistry.add): a crawl due in two hours is not part of the
 * request that scheduled it. When a caller brings it forward (`POST /api/ips/:id/crawl`, a
 * promote from the job console), its run is what the caller asked for, so it joins the caller's
 * trace: a `promote <queue>` span is recorded there and the job's trace context (BullMQ keeps it
 * in the job's options, `tm`) is set to it before the job is promoted. BullMQ has no call for
 * that, hence job-trace-context.lua, which writes it only while the job is still delayed.
 */
import { SpanKind, type Job, type Queue } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { RedisScript } from '../redis/script.js';

const recordTraceContext = RedisScript.load('job-trace-context', new URL('./job-trace-context.lua', import.meta.url), {
  keys: ['job', 'delayed'],
  args: ['jobId', 'metadata'],
});

/** Job.promote in the caller's trace (a queue without telemetry: Job.promote alone). */
export async function promoteTraced(redis: RedisClient, queue: Queue, job: Job): Promise<void> {
  await queue.trace(SpanKind.PRODUCER, 'promote', queue.name, async (span, metadata) => {
    span?.setAttributes({ 'bullmq.job.id': job.id!, 'bullmq.job.name': job.name });
    if (metadata) await recordTraceContext.run(redis, { job: queue.toKey(job.id!), delayed: queue.keys.delayed! }, { jobId: job.id!, metadata });
    await job.promote();
  });
}
