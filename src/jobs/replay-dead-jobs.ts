/**
 * Acting on every dead job a filter matches (POST /api/dead-jobs/retry, DELETE /api/dead-jobs,
 * POST /api/queues/:name/retry-failed, Bull Board's Retry all): each one is read once, checked
 * to be failed still, and replayed (through its chain where its queue has one: chain-replays.ts)
 * or removed; jobs gone or moved meanwhile, or that their chain refused, are skipped.
 */
import type { Job } from 'bullmq';
import { replayFailed } from './chain-replays.js';
import type { ConsoleContext } from './console-context.js';
import { matchDeadJobs, type DeadJobFilter, type DeadJobMatch } from './dead-jobs.js';
import { findJob } from './find-job.js';

export async function replayDeadJobs(ctx: ConsoleContext, filter: DeadJobFilter): Promise<{ retried: number; skipped: number }> {
  const { done, skipped } = await eachStillDead(ctx, filter, (m, job) => replayFailed(ctx.queues, ctx.chains, m.queue, job));
  return { retried: done, skipped };
}

export async function removeDeadJobs(ctx: ConsoleContext, filter: DeadJobFilter): Promise<{ removed: number; skipped: number }> {
  const { done, skipped } = await eachStillDead(ctx, filter, (_m, job) => job.remove());
  return { removed: done, skipped };
}

/** Replays every failed job of a queue (the dead-job replay, for one queue). */
export async function retryFailed(ctx: ConsoleContext, name: string): Promise<{ queue: string; retried: number }> {
  ctx.queues.resolveOr404(name);
  const { retried } = await replayDeadJobs(ctx, { queue: name });
  return { queue: name, retried };
}

async function eachStillDead(
  ctx: ConsoleContext,
  filter: DeadJobFilter,
  act: (m: DeadJobMatch, job: Job) => Promise<unknown>,
): Promise<{ done: number; skipped: number }> {
  let done = 0;
  let skipped = 0;
  for (const m of (await matchDeadJobs(ctx, filter, Infinity)).matches) {
    const job = await findJob(m.queue, m.id);
    try {
      if (!job || (await job.getState()) !== 'failed') throw new Error('no longer failed');
      await act(m, job);
      done++;
    } catch {
      skipped++;
    }
  }
  return { done, skipped };
}
