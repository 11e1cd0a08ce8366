/**
 * GET /api/queues: every registered queue with its job counts. A partitioned queue (QUEUE_SHARDS)
 * answers the sum over its partitions, with `partitions` listing each one (older layouts being
 * drained included); it is paused when every partition is.
 */
import type { Queue } from 'bullmq';
import { queueKeys, queues as declarations, type QueueFamily } from '../queues/definitions.js';
import { JOB_STATES } from '../queues/job-states.js';
import type { ConsoleContext } from './console-context.js';

export interface QueueCounts {
  name: string;
  counts: Record<string, number>;
  paused: boolean;
  /** With partitions (QUEUE_SHARDS > 1, or an older layout draining): the queue family, and each partition's counts. */
  family?: QueueFamily;
  partitions?: { name: string; counts: Record<string, number>; paused: boolean }[];
}

export async function queueCounts(ctx: ConsoleContext): Promise<QueueCounts[]> {
  const one = async (q: Queue) => ({ name: q.name, counts: await q.getJobCounts(...JOB_STATES), paused: await q.isPaused() });
  return Promise.all(
    queueKeys.map(async (key) => {
      const parts = await Promise.all(ctx.queues.registry.everywhere(key).map(one));
      const { name, family } = declarations[key];
      if (parts.length === 1) return { ...parts[0]!, name };
      const counts: Record<string, number> = {};
      for (const p of parts) for (const [state, n] of Object.entries(p.counts)) counts[state] = (counts[state] ?? 0) + n;
      return { name, family, counts, paused: parts.every((p) => p.paused), partitions: parts };
    }),
  );
}

/** Stops (or lets again) every worker of the queue(s) `name` stands for take jobs; jobs keep their places. */
export async function setPaused(ctx: ConsoleContext, name: string, paused: boolean): Promise<{ queue: string; paused: boolean }> {
  const qs = ctx.queues.resolveOr404(name);
  await Promise.all(qs.map((q) => (paused ? q.pause() : q.resume())));
  return { queue: name, paused: (await Promise.all(qs.map((q) => q.isPaused()))).every(Boolean) };
}
