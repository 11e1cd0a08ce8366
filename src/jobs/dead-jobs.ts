/**
 * The dead-job console (GET /api/dead-jobs): the failed jobs of every queue (or of
 * `filter.queue`), newest first, those whose id, name or failure reason contains `filter.q`,
 * from `offset`; `total` counts every match. Without `q` only the newest `offset + limit` of each
 * failed set are read; with it every failed job's name and reason are read, in pipelined batches.
 */
import type { Queue } from 'bullmq';
import type { ConsoleContext } from './console-context.js';
import { findJob } from './find-job.js';
import { viewDeadJob, type DeadJobEntry } from './job-views.js';

export interface DeadJobFilter {
  /** One queue's dead jobs only. */
  queue?: string;
  /** Case-insensitive text to find in the job's id, name or failure reason. */
  q?: string;
}

/** A dead job found by a filter: where it is and when it failed (nothing of it read yet). */
export interface DeadJobMatch {
  queue: Queue;
  id: string;
  failedAt: number;
}

/** Jobs read per pipelined batch while searching the failed sets. */
const SCAN_BATCH = 500;

export async function listDeadJobs(
  ctx: ConsoleContext,
  filter: DeadJobFilter,
  offset: number,
  limit: number,
): Promise<{ total: number; offset: number; limit: number; jobs: DeadJobEntry[] }> {
  const { total, matches } = await matchDeadJobs(ctx, filter, filter.q ? Infinity : offset + limit);
  const page = matches.slice(offset, offset + limit);
  const jobs = await Promise.all(page.map(async (m) => ({ m, job: await findJob(m.queue, m.id) })));
  return { total, offset, limit, jobs: jobs.flatMap(({ m, job }) => (job ? [viewDeadJob(m.queue.name, job)] : [])) };
}

/** Matching dead jobs, newest first (at most `take` when there is no text to search). */
export async function matchDeadJobs(ctx: ConsoleContext, filter: DeadJobFilter, take: number): Promise<{ total: number; matches: DeadJobMatch[] }> {
  const qs = filter.queue !== undefined ? ctx.queues.resolveOr400(filter.queue) : ctx.queues.registry.all();
  const needle = filter.q?.toLowerCase();
  const { redis } = ctx;
  let total = 0;
  const matches: DeadJobMatch[] = [];
  for (const q of qs) {
    const failedKey = q.keys.failed!;
    const stop = Number.isFinite(take) ? take - 1 : -1;
    const [flat, count] = await Promise.all([redis.zrevrange(failedKey, 0, stop, 'WITHSCORES'), redis.zcard(failedKey)]);
    const entries: { id: string; failedAt: number }[] = [];
    for (let k = 0; k < flat.length; k += 2) entries.push({ id: flat[k]!, failedAt: Number(flat[k + 1]) });
    if (!needle) {
      total += count;
      for (const e of entries) matches.push({ queue: q, ...e });
      continue;
    }
    for (let k = 0; k < entries.length; k += SCAN_BATCH) {
      const batch = entries.slice(k, k + SCAN_BATCH);
      const fields = await Promise.all(batch.map((e) => redis.hmget(q.toKey(e.id), 'name', 'failedReason')));
      batch.forEach((e, n) => {
        const [name, reason] = fields[n]!;
        if ([e.id, name ?? '', reason ?? ''].some((text) => text.toLowerCase().includes(needle))) {
          total++;
          matches.push({ queue: q, ...e });
        }
      });
    }
  }
  matches.sort((a, b) => b.failedAt - a.failedAt);
  return { total, matches: Number.isFinite(take) ? matches.slice(0, take) : matches };
}
