/**
 * Running a delayed job now on someone's behalf, seen in their trace. With tracing on, a delayed
 * job runs in a trace of its own (QueueRegistry.add): a crawl due in two hours is not part of the
 * request that scheduled it, and BullMQ fixes a job's trace context when the job is added. When a
 * caller brings it forward (`POST /api/ips/:id/crawl`, a promote from the job console), the
 * caller's trace records a `promote <queue>` span naming the job (`bullmq.job.id`), by which the
 * run's own trace is found. (Moving the run into the caller's trace would mean rewriting BullMQ's
 * stored job options: not done.)
 */
import { SpanKind, type Job, type Queue } from 'bullmq';

/** Job.promote under a `promote <queue>` span of the caller's trace (a queue without telemetry: Job.promote alone). */
export async function promoteTraced(queue: Queue, job: Job): Promise<void> {
  await queue.trace(SpanKind.PRODUCER, 'promote', queue.name, async (span) => {
    span?.setAttributes({ 'bullmq.job.id': job.id!, 'bullmq.job.name': job.name });
    await job.promote();
  });
}
