/**
 * Reading and acting on jobs across the registered queues: counts by state, job lists, retry,
 * delete, the dead jobs (failed set) of every queue, and task lookup by id.
 */
import type { Job, JobType, Queue } from 'bullmq';
import { HttpError } from '../errors.js';
import type { QueueRegistry } from './registry.js';

/** Log lines of a task shown by GET /api/tasks/:id (the newest ones). */
export const TASK_LOG_LINES = 20;

export interface TaskView {
  task_id: string;
  queue: string;
  state: string;
  result?: unknown;
  failedReason?: string;
  attemptsMade: number;
  /** The processor's last progress report (0 when none). */
  progress: unknown;
  /** The newest log lines, oldest first. */
  logs: string[];
  /** Log lines kept for the job (all of them: Bull Board shows them in its Logs tab). */
  logCount: number;
}

export const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface JobView {
  id: string;
  queue: string;
  name: string;
  state?: string;
  data: unknown;
  attemptsMade: number;
  attempts: number;
  failedReason?: string;
  stacktrace?: string[];
  returnValue?: unknown;
  createdAt: string;
  processedAt?: string;
  finishedAt?: string;
  delayUntil?: string;
  priority: number;
}

function iso(ms: number | undefined): string | undefined {
  return ms ? new Date(ms).toISOString() : undefined;
}

export function viewJob(queue: string, job: Job, state?: string): JobView {
  return {
    id: job.id!,
    queue,
    name: job.name,
    ...(state ? { state } : {}),
    data: job.data,
    attemptsMade: job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    ...(job.stacktrace?.length ? { stacktrace: job.stacktrace } : {}),
    ...(job.returnvalue !== undefined && job.returnvalue !== null ? { returnValue: job.returnvalue } : {}),
    createdAt: iso(job.timestamp)!,
    ...(job.processedOn ? { processedAt: iso(job.processedOn) } : {}),
    ...(job.finishedOn ? { finishedAt: iso(job.finishedOn) } : {}),
    ...(job.delay ? { delayUntil: iso(job.timestamp + job.delay) } : {}),
    priority: job.priority ?? 0,
  };
}

export class JobInspector {
  constructor(private readonly queues: QueueRegistry) {}

  private queueOr404(name: string): Queue {
    const q = this.queues.byName(name);
    if (!q) throw new HttpError(404, 'unknown_queue', `no queue named "${name}"`, 'name');
    return q;
  }

  private async jobOr404(q: Queue, id: string): Promise<Job> {
    const job = await q.getJob(id);
    if (!job) throw new HttpError(404, 'unknown_job', `no job "${id}" in queue "${q.name}"`, 'id');
    return job;
  }

  async counts(): Promise<{ name: string; counts: Record<string, number>; paused: boolean }[]> {
    return Promise.all(
      this.queues.all().map(async (q) => ({
        name: q.name,
        counts: await q.getJobCounts(...JOB_STATES),
        paused: await q.isPaused(),
      })),
    );
  }

  async list(name: string, state: JobState, start: number, end: number): Promise<{ queue: string; state: string; total: number; jobs: JobView[] }> {
    const q = this.queueOr404(name);
    const [jobs, total] = await Promise.all([q.getJobs([state as JobType], start, end, state !== 'completed' && state !== 'failed'), q.getJobCountByTypes(state as JobType)]);
    return { queue: name, state, total, jobs: jobs.filter(Boolean).map((j) => viewJob(name, j, state)) };
  }

  async get(name: string, id: string): Promise<JobView> {
    const q = this.queueOr404(name);
    const job = await this.jobOr404(q, id);
    return viewJob(name, job, await job.getState());
  }

  /** Retries a failed (or completed) job. */
  async retry(name: string, id: string): Promise<JobView> {
    const q = this.queueOr404(name);
    const job = await this.jobOr404(q, id);
    const state = await job.getState();
    if (state !== 'failed' && state !== 'completed') {
      throw new HttpError(409, 'not_retryable', `job "${id}" is ${state}; only failed or completed jobs can be retried`, 'id');
    }
    await job.retry(state);
    return viewJob(name, job, 'waiting');
  }

  async remove(name: string, id: string): Promise<void> {
    const q = this.queueOr404(name);
    const job = await this.jobOr404(q, id);
    const state = await job.getState();
    if (state === 'active') throw new HttpError(409, 'job_active', `job "${id}" is running; it cannot be deleted now`, 'id');
    await job.remove();
  }

  async retryFailed(name: string): Promise<{ queue: string; retried: number }> {
    const q = this.queueOr404(name);
    const retried = await q.getFailedCount();
    await q.retryJobs({ state: 'failed', count: 1000 });
    return { queue: name, retried };
  }

  /** Failed jobs of every queue, newest first. */
  async deadJobs(limit: number): Promise<{ total: number; jobs: JobView[] }> {
    const perQueue = await Promise.all(
      this.queues.all().map(async (q) => {
        const [jobs, total] = await Promise.all([q.getJobs(['failed'], 0, limit - 1, false), q.getFailedCount()]);
        return { total, jobs: jobs.filter(Boolean).map((j) => viewJob(q.name, j, 'failed')) };
      }),
    );
    const jobs = perQueue
      .flatMap((p) => p.jobs)
      .sort((a, b) => (b.finishedAt ?? b.createdAt).localeCompare(a.finishedAt ?? a.createdAt))
      .slice(0, limit);
    return { total: perQueue.reduce((n, p) => n + p.total, 0), jobs };
  }

  /**
   * A task by id, looked up in every queue: its state, result or failure, attempts, its progress
   * (what the processor reported last, e.g. a crawl's pages and items) and its last
   * TASK_LOG_LINES log lines, oldest first (`logCount` says how many it wrote, up to the
   * KEEP_LOG_LINES kept).
   */
  async task(id: string): Promise<TaskView> {
    for (const q of this.queues.all()) {
      let job = await q.getJob(id);
      if (!job) continue;
      const state = await job.getState();
      // A job that finished between the two reads was read as it was before; once finished it
      // no longer changes, so read it again to answer its result with its final state.
      if ((state === 'completed' || state === 'failed') && !job.finishedOn) job = (await q.getJob(id)) ?? job;
      const logs = await q.getJobLogs(id, 0, TASK_LOG_LINES - 1, false);
      return {
        task_id: id,
        queue: q.name,
        state,
        ...(state === 'completed' ? { result: job.returnvalue } : {}),
        ...(job.failedReason ? { failedReason: job.failedReason } : {}),
        attemptsMade: job.attemptsMade,
        progress: job.progress ?? 0,
        logs: [...logs.logs].reverse(),
        logCount: logs.count,
      };
    }
    throw new HttpError(404, 'unknown_task', `no task "${id}" (finished tasks are kept for JOB_KEEP_COMPLETED_SECONDS)`, 'task_id');
  }
}
