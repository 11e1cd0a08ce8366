/**
 * The job console: reading and acting on jobs across the registered queues, one file per
 * operation beside this one (graphile-worker's layout). Every way in goes through it: the REST
 * routes (src/http/routes/job-routes.ts) and Bull Board's buttons (dashboards/board-actions.ts),
 * so the chains' rules hold whichever an operator uses.
 *
 *   queue-counts.ts       counts by state per queue; pause and resume
 *   list-jobs.ts          a queue's jobs in one state; one job
 *   add-job.ts            jobs added by an operator (payload checked; chained queues refuse)
 *   retry-job.ts          retry one job (a dead job of a chain replays through its chain)
 *   promote-job.ts        run a delayed job, or all of a queue's, now
 *   remove-job.ts         delete one job
 *   dead-jobs.ts          the failed jobs of every queue: filter, search, page
 *   replay-dead-jobs.ts   replay or remove every dead job a filter matches
 *   find-task.ts          a task by id in every queue (GET /api/tasks/:id)
 *
 * Chains (chain-replays.ts): a queue whose jobs form a chain registers replay and promote
 * handlers, so that no replay leaves a second pending crawl or refresh.
 */
import type { QueueRegistry } from '../queues/registry.js';
import type { JobState } from '../queues/job-states.js';
import type { RedisClient } from '../redis/connection.js';
import { addJob, type AddedJob } from './add-job.js';
import type { ChainHandlers } from './chain-replays.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleQueues } from './console-queues.js';
import { listDeadJobs, type DeadJobFilter } from './dead-jobs.js';
import { findTask, type TaskVisibility } from './find-task.js';
import { getJob, listJobs } from './list-jobs.js';
import { promoteAll, promoteJob } from './promote-job.js';
import { queueCounts, setPaused } from './queue-counts.js';
import { removeJob } from './remove-job.js';
import { removeDeadJobs, replayDeadJobs, retryFailed } from './replay-dead-jobs.js';
import { retryJob } from './retry-job.js';

export interface JobConsoleDeps extends ChainHandlers {
  queues: QueueRegistry;
  /** For reads BullMQ has no getter for (due times, the failed set with scores). */
  redis: RedisClient;
}

export class JobConsole {
  private readonly ctx: ConsoleContext;

  constructor(deps: JobConsoleDeps) {
    this.ctx = { queues: new ConsoleQueues(deps.queues), redis: deps.redis, chains: { replay: deps.replay, promote: deps.promote } };
  }

  counts = () => queueCounts(this.ctx);
  setPaused = (name: string, paused: boolean) => setPaused(this.ctx, name, paused);
  list = (name: string, state: JobState, start: number, end: number) => listJobs(this.ctx, name, state, start, end);
  get = (name: string, id: string) => getJob(this.ctx, name, id);
  add = (name: string, input: AddedJob) => addJob(this.ctx, name, input);
  retry = (name: string, id: string) => retryJob(this.ctx, name, id);
  promote = (name: string, id: string) => promoteJob(this.ctx, name, id);
  promoteAll = (name: string) => promoteAll(this.ctx, name);
  remove = (name: string, id: string) => removeJob(this.ctx, name, id);
  retryFailed = (name: string) => retryFailed(this.ctx, name);
  deadJobs = (filter: DeadJobFilter, offset: number, limit: number) => listDeadJobs(this.ctx, filter, offset, limit);
  replayDead = (filter: DeadJobFilter) => replayDeadJobs(this.ctx, filter);
  removeDead = (filter: DeadJobFilter) => removeDeadJobs(this.ctx, filter);
  task = (id: string, visible?: TaskVisibility, queueName?: string) => findTask(this.ctx, id, visible, queueName);
}
