/**
 * The `maintenance` queue for one leader term: its job schedulers and its worker. The cluster
 * role starts it when this process takes the leader's lease (LEADER_TASK) and stops it when the term ends,
 * so periodic platform work runs in one process at a time, in the open (Bull Board lists every
 * task's scheduler, runs, results, logs and failures).
 *
 * At the start of a term:
 *   1. one job scheduler per task with a period (an upsert keeps the next run of an unchanged
 *      period, a changed period replaces it); every other scheduler on the queue is removed, so
 *      that the leader only ever receives jobs of tasks it knows;
 *   2. each task marked runAtStart gets one job more, id `<task>@term-<token>` (once per term);
 *   3. the worker starts, one slot per task; a task never runs twice at once (a run that finds
 *      the previous one still going is skipped, and says so in its result).
 * A Redis that lost its data lost the schedulers, and the lease with them: the term ends and the
 * next term recreates them, so no watchdog is needed.
 *
 * A job taken while the term is no longer current (a process resumed after a pause can fetch a
 * job before its lease manager has ended the term) is handed back without running and without
 * spending its attempt: the successor's worker takes it. A run that meets an outage of Redis or
 * the database is delayed by the worker factory, its one attempt untouched, and runs again once
 * the dependency answers (counted as outcome `delayed`, not `failed`). At the end of the term the
 * worker closes; running tasks see `signal` aborted and `term.isCurrent()` false and stop early.
 */
import type { JobsOptions } from 'bullmq';
import type { PlatformContext } from '../context.js';
import type { LeaderTerm } from '../coordination/leadership.js';
import { BlockedError, toError } from '../errors.js';
import { dependencyDown } from '../lib/dependency-down.js';
import { createWorker } from './create-worker.js';
import { MAINTENANCE_TASK_NAME, type MaintenanceTask } from './maintenance-task.js';

export type MaintenanceContext = Pick<PlatformContext, 'config' | 'connections' | 'keys' | 'metrics' | 'logger' | 'queues' | 'instanceId'>;

/** A job handed back by a process whose term ended waits this long before the successor takes it. */
const HAND_BACK_MS = 500;

/** Metrics of the maintenance runs (registered at role start, so every cluster process exports them). */
export function maintenanceMetrics(metrics: PlatformContext['metrics']) {
  return {
    runs: metrics.counter(
      'wp_maintenance_runs_total',
      'Runs of periodic maintenance tasks, by task and outcome (ok, failed, skipped, delayed: Redis or the database was unavailable, the run comes again).',
      ['task', 'outcome'],
    ),
    duration: metrics.histogram(
      'wp_maintenance_run_duration_seconds',
      'Duration of maintenance runs, by task.',
      ['task'],
      [0.005, 0.05, 0.25, 1, 5, 15, 60, 300],
    ),
    lastSuccess: metrics.gauge('wp_maintenance_last_success_timestamp_seconds', 'When each maintenance task last succeeded in this process (epoch seconds).', [
      'task',
    ]),
  };
}

/** Options of every maintenance job: one attempt (the next run comes anyway), runs kept for a while. */
export function maintenanceJobOptions(config: PlatformContext['config']): JobsOptions {
  return {
    attempts: 1,
    removeOnComplete: { age: config.queues.keepCompletedSeconds, count: 1000 },
    removeOnFail: { age: config.queues.keepFailedSeconds, count: 1000 },
  };
}

export async function startMaintenance(ctx: MaintenanceContext, tasks: readonly MaintenanceTask[], term: LeaderTerm): Promise<() => Promise<void>> {
  const logger = ctx.logger.child({ component: 'maintenance', term: term.token });
  const byName = new Map<string, MaintenanceTask>();
  for (const task of tasks) {
    if (!MAINTENANCE_TASK_NAME.test(task.name)) throw new Error(`invalid maintenance task name "${task.name}"`);
    if (byName.has(task.name)) throw new Error(`maintenance task "${task.name}" listed twice`);
    byName.set(task.name, task);
  }
  const queue = ctx.queues.queue('maintenance');
  const opts = maintenanceJobOptions(ctx.config);
  const metrics = maintenanceMetrics(ctx.metrics);

  const periodic = tasks.filter((t) => t.everyMs > 0);
  for (const task of periodic) {
    await queue.upsertJobScheduler(
      task.name,
      { every: task.everyMs },
      { name: task.name, data: ctx.queues.validate('maintenance', { task: task.name }), opts: ctx.queues.ownTrace(opts) },
    );
  }
  const kept = new Set(periodic.map((t) => t.name));
  for (const scheduler of await queue.getJobSchedulers(0, -1)) {
    if (!kept.has(scheduler.key)) await queue.removeJobScheduler(scheduler.key);
  }
  for (const task of tasks.filter((t) => t.runAtStart)) {
    await ctx.queues.add('maintenance', task.name, { task: task.name }, { ...opts, jobId: `${task.name}@term-${term.token}` });
  }

  const running = new Set<string>();
  const worker = createWorker(
    ctx,
    'maintenance',
    async (job, jobCtx) => {
      if (!term.isCurrent())
        throw new BlockedError('this process is no longer the leader; handed back to the next one', HAND_BACK_MS, 'not_leader', { routine: true });
      const task = byName.get(job.name);
      if (!task) {
        metrics.runs.inc({ task: job.name, outcome: 'skipped' });
        return { skipped: `no task "${job.name}" on this leader` };
      }
      if (running.has(task.name)) {
        metrics.runs.inc({ task: task.name, outcome: 'skipped' });
        await job.log('skipped: the previous run of this task is still going');
        return { skipped: 'the previous run is still going' };
      }
      running.add(task.name);
      const started = performance.now();
      try {
        const result = await task.run({ job, term, signal: term.signal, logger: jobCtx.logger.child({ task: task.name }) });
        metrics.runs.inc({ task: task.name, outcome: 'ok' });
        metrics.lastSuccess.set({ task: task.name }, Date.now() / 1000);
        logger.debug({ task: task.name, ms: Math.round(performance.now() - started), result }, 'maintenance task ran');
        return result ?? null;
      } catch (err) {
        // An outage is not the task's failure: the worker factory delays the run and logs it.
        if (dependencyDown(err)) {
          metrics.runs.inc({ task: task.name, outcome: 'delayed' });
          throw err;
        }
        metrics.runs.inc({ task: task.name, outcome: 'failed' });
        logger.warn({ task: task.name, err: toError(err).message }, 'maintenance task failed; its next run retries');
        throw err;
      } finally {
        metrics.duration.observe({ task: task.name }, (performance.now() - started) / 1000);
        running.delete(task.name);
      }
    },
    // Named `cluster@<instance id>` by the factory: the job's processedBy says which leader ran it.
    { concurrency: Math.max(1, tasks.length) },
  );
  logger.info({ tasks: tasks.map((t) => ({ name: t.name, everyMs: t.everyMs })) }, 'maintenance tasks scheduled');

  let stopping: Promise<void> | undefined;
  return () => (stopping ??= worker.close());
}
