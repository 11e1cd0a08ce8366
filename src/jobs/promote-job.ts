/**
 * Running delayed jobs now (POST /api/queues/:name/jobs/:id/promote, …/promote-all, Bull Board's
 * Promote): a job of a chain through its chain's promote handler (`chain`: the task that runs now),
 * another job is promoted. Only a delayed job can be (409 `not_delayed`).
 */
import { InvalidStateError } from '../errors.js';
import type { ChainReplay } from './chain-replays.js';
import type { ConsoleContext } from './console-context.js';
import { findJob, jobOr404 } from './find-job.js';

export async function promoteJob(ctx: ConsoleContext, name: string, id: string): Promise<{ id: string; queue: string; state: string; chain?: ChainReplay }> {
  const q = ctx.queues.one(name);
  const job = await jobOr404(q, id);
  const state = await job.getState();
  if (state !== 'delayed') throw new InvalidStateError('not_delayed', `job "${id}" is ${state}; only a delayed job can be promoted`, { field: 'id' });
  const handler = ctx.chains.promote?.get(ctx.queues.familyName(q));
  const chain = handler ? await handler(job) : undefined;
  if (!handler) await job.promote();
  return { id, queue: name, state: await q.getJobState(id), ...(chain ? { chain } : {}) };
}

/**
 * Runs every delayed job of a queue now (one partition, or every queue of a registered name).
 * Jobs of a chain go through its promote handler one by one: only those delayed when this
 * started (a crawl run now schedules its successor, delayed, which stays where it is); jobs that
 * moved meanwhile or that the handler refused are skipped.
 */
export async function promoteAll(ctx: ConsoleContext, name: string): Promise<{ queue: string; promoted: number; skipped: number }> {
  let promoted = 0;
  let skipped = 0;
  for (const q of ctx.queues.resolveOr404(name)) {
    const handler = ctx.chains.promote?.get(ctx.queues.familyName(q));
    const ids = (await ctx.redis.zrevrange(q.keys.delayed!, 0, -1)).reverse(); // soonest due first
    if (!handler) {
      await q.promoteJobs();
      promoted += ids.length;
      continue;
    }
    for (const id of ids) {
      try {
        const job = await findJob(q, id);
        if (!job || (await job.getState()) !== 'delayed') throw new Error('no longer delayed');
        await handler(job);
        promoted++;
      } catch {
        skipped++;
      }
    }
  }
  return { queue: name, promoted, skipped };
}
