/**
 * A task by id (GET /api/tasks/:task_id), looked up in every queue: its state, result or failure,
 * attempts, its progress (what the processor reported last, e.g. a crawl's pages and items) and
 * its last TASK_LOG_LINES log lines, oldest first (`logCount` says how many it wrote, up to the
 * KEEP_LOG_LINES kept). `visible` (default: all) decides whether the caller may see it, and a
 * task it may not see is answered like a missing one (404).
 *
 * `queueName` limits the lookup to one queue. Ids BullMQ numbers itself (jobs added without an
 * id: by hand, drains, refills) start at 1 in every queue, so one id may name a job in several
 * queues: then the caller must say which (409 `ambiguous_task` naming them), never a guess.
 */
import type { Job, Queue } from 'bullmq';
import { ConflictError, NotFoundError } from '../errors.js';
import type { ConsoleContext } from './console-context.js';
import { findJob } from './find-job.js';

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

/** Whether the caller may see a task (`queue`: the registered queue's name). */
export type TaskVisibility = (queue: string, job: Job) => boolean | Promise<boolean>;

export async function findTask(ctx: ConsoleContext, id: string, visible: TaskVisibility = () => true, queueName?: string): Promise<TaskView> {
  const candidates = queueName !== undefined ? ctx.queues.resolveOr400(queueName) : ctx.queues.registry.all();
  const looked = await Promise.all(
    candidates.map(async (q) => {
      const job = await findJob(q, id);
      return job && (await visible(ctx.queues.familyName(q), job)) ? { q, job } : undefined;
    }),
  );
  const found = looked.filter((f): f is { q: Queue; job: Job } => f !== undefined);
  if (found.length > 1) {
    const names = found.map((f) => f.q.name);
    throw new ConflictError('ambiguous_task', `"${id}" names a job in ${names.length} queues (${names.join(', ')}): ask again with ?queue=<name>`, {
      field: 'queue',
    });
  }
  if (found.length === 0)
    throw new NotFoundError('unknown_task', `no task "${id}" (finished tasks are kept for JOB_KEEP_COMPLETED_SECONDS)`, { field: 'task_id' });
  const { q } = found[0]!;
  let { job } = found[0]!;
  const state = await job.getState();
  // A job that finished between the two reads was read as it was before; once finished it
  // no longer changes, so read it again to answer its result with its final state.
  if ((state === 'completed' || state === 'failed') && !job.finishedOn) job = (await findJob(q, id)) ?? job;
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
