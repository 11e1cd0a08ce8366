/**
 * With tracing on, a delayed job brought forward on someone's behalf (`POST /api/ips/:id/crawl`,
 * a promote from the job console or Bull Board) does its work in their trace. BullMQ fixes a job's
 * trace context when the job is added, and a delayed job runs in a trace of its own
 * (QueueRegistry.add), so the caller's context is handed over beside the job instead: the promote
 * writes it under a short-lived key of the platform's own (traceHandover, 10 minutes), and the
 * worker factory takes it (GETDEL) when it runs a job that was added with a delay. The run's work
 * (its Redis commands and queries, the jobs it adds) then happens under a `process <queue>` span
 * of the caller's trace; BullMQ's own span of the run stays in the job's trace. A handover that
 * cannot be written or read (Redis down) only costs the link: the job runs as it would have.
 */
import { SpanKind, type Job, type Queue, type Telemetry } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

const HANDOVER_TTL_MS = 10 * 60_000;
/** A W3C trace context as BullMQ's context manager writes it (getMetadata): a small JSON object. */
const MAX_METADATA_LENGTH = 1024;

/** Job.promote under a `promote <queue>` span of the caller's trace, whose context the run takes over. */
export async function promoteTraced(redis: RedisClient, keys: Keys, queue: Queue, job: Job): Promise<void> {
  await queue.trace(SpanKind.PRODUCER, 'promote', queue.name, async (span, metadata) => {
    span?.setAttributes({ 'bullmq.job.id': job.id!, 'bullmq.job.name': job.name });
    if (metadata && metadata.length <= MAX_METADATA_LENGTH)
      await redis.set(keys.traceHandover(queue.name, job.id!), metadata, 'PX', HANDOVER_TTL_MS).catch(() => undefined);
    await job.promote();
  });
}

/**
 * Runs `work` for a job: when the job was added with a delay and a caller handed its trace over,
 * under a `process <queue>` span of that trace; else as it is.
 */
export async function inHandedOverTrace<T>(
  telemetry: Telemetry,
  redis: RedisClient,
  keys: Keys,
  job: Job,
  workerName: string,
  work: () => Promise<T>,
): Promise<T> {
  if (!job.opts.delay) return work();
  const metadata = await redis.getdel(keys.traceHandover(job.queueName, job.id!)).catch(() => null);
  if (!metadata || metadata.length > MAX_METADATA_LENGTH) return work();
  const { tracer, contextManager } = telemetry;
  const parent = contextManager.fromMetadata(contextManager.active(), metadata);
  const span = tracer.startSpan(`process ${job.queueName}`, { kind: SpanKind.CONSUMER }, parent);
  span.setAttributes({ 'bullmq.queue.name': job.queueName, 'bullmq.job.id': job.id!, 'bullmq.job.name': job.name, 'bullmq.worker.name': workerName });
  try {
    return await contextManager.with(span.setSpanOnContext(parent), work);
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err));
    throw err;
  } finally {
    span.end();
  }
}
