/** Reading jobs: one queue's jobs in one state by index range, and one job by id (delayed ones with their due time). */
import type { JobType, Queue } from 'bullmq';
import { delayedDueAt } from '../queues/delayed-due.js';
import type { JobState } from '../queues/job-states.js';
import type { ConsoleContext } from './console-context.js';
import { jobOr404 } from './find-job.js';
import { iso, viewJob, type JobView } from './job-views.js';

export async function listJobs(
  ctx: ConsoleContext,
  name: string,
  state: JobState,
  start: number,
  end: number,
): Promise<{ queue: string; state: string; total: number; jobs: JobView[] }> {
  const q = ctx.queues.one(name);
  const [found, total] = await Promise.all([
    q.getJobs([state as JobType], start, end, state !== 'completed' && state !== 'failed'),
    q.getJobCountByTypes(state as JobType),
  ]);
  const views = found.filter(Boolean).map((j) => viewJob(name, j, state));
  if (state === 'delayed') await addDueTimes(ctx, q, views);
  return { queue: name, state, total, jobs: views };
}

export async function getJob(ctx: ConsoleContext, name: string, id: string): Promise<JobView> {
  const q = ctx.queues.one(name);
  const job = await jobOr404(q, id);
  const view = viewJob(name, job, await job.getState());
  if (view.state === 'delayed') await addDueTimes(ctx, q, [view]);
  return view;
}

/** delayUntil of delayed jobs, from the delayed set (right for moved and retried jobs too). */
async function addDueTimes(ctx: ConsoleContext, q: Queue, views: JobView[]): Promise<void> {
  const due = await delayedDueAt(
    ctx.redis,
    q,
    views.map((v) => v.id),
  );
  views.forEach((v, i) => {
    const at = due[i];
    if (at !== null && at !== undefined) v.delayUntil = iso(at)!;
  });
}
