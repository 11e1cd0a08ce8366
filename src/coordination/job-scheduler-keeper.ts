/**
 * The job schedulers the roles keep (declared with their queues: `schedulers` in
 * src/queues/declarations/, today `pools-check` and `message-persist-sweep`), and the leader's
 * watch over them.
 *
 * - A role that consumes the queue upserts them when it starts (idempotent across its
 *   processes: an unchanged period keeps its next run), each in the partition its job's data
 *   names (upsertDeclaredSchedulers).
 * - The leader's `job-schedulers-keep` maintenance task (at the start of each term and every
 *   JOB_SCHEDULER_CHECK_MS) puts back one that is gone (a Redis that lost its data lost it, and
 *   the lease with it: the next term checks at once), as long as some live process consumes its
 *   queue (the instance registry's queue sets); one that nobody consumes comes back with the
 *   first process of its role. A scheduler put back is logged and counted
 *   (wp_job_schedulers_recreated_total), with the leader's settings for its period.
 *
 * One process checks, not every process of the role.
 */
import type { Queue } from 'bullmq';
import type { Config } from '../config/index.js';
import type { Metrics } from '../metrics/metrics.js';
import { partitionKeyOf, queueKeys, queues as declarations, type QueueDefinition, type QueueKey } from '../queues/definitions.js';
import type { SchedulerDeclaration } from '../queues/declare-queue.js';
import type { QueueRegistry } from '../queues/registry.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { membersOf } from './instance-registry.js';
import type { MaintenanceTask } from './maintenance-task.js';

interface Kept {
  key: QueueKey;
  scheduler: SchedulerDeclaration<unknown>;
}

function declared(key: QueueKey): Kept[] {
  const def: QueueDefinition = declarations[key];
  return (def.schedulers ?? []).map((scheduler) => ({ key, scheduler }));
}

/** The queue (partition) a kept scheduler lives in: the one its job's data names. */
function queueOf(queues: QueueRegistry, { key, scheduler }: Kept): Queue {
  return queues.queue(key, partitionKeyOf(key, queues.validate(key, scheduler.data)));
}

function upsert(ctx: { config: Config; queues: QueueRegistry }, kept: Kept): Promise<unknown> {
  const { scheduler } = kept;
  // With tracing on, each run is a trace of its own, not one more span of a trace that never ends.
  const opts = ctx.queues.ownTrace(scheduler.opts ?? {});
  return queueOf(ctx.queues, kept).upsertJobScheduler(
    scheduler.id,
    { every: scheduler.everyMs(ctx.config) },
    { name: scheduler.name, data: ctx.queues.validate(kept.key, scheduler.data), opts },
  );
}

/** Upserts the job schedulers declared for queue `key` (a role consuming it, at its start). */
export async function upsertDeclaredSchedulers(ctx: { config: Config; queues: QueueRegistry }, key: QueueKey): Promise<void> {
  for (const kept of declared(key)) await upsert(ctx, kept);
}

export interface KeeperDeps {
  config: Config;
  queues: QueueRegistry;
  redis: RedisClient;
  keys: Keys;
  metrics: Metrics;
}

/** The leader's `job-schedulers-keep` task (see the header). */
export function keepSchedulersTask(deps: KeeperDeps): MaintenanceTask {
  const recreated = deps.metrics.counter(
    'wp_job_schedulers_recreated_total',
    'Job schedulers found missing (a Redis that lost its data) and put back, by queue and scheduler.',
    ['queue', 'scheduler'],
  );
  const ttlMs = deps.config.cluster.instanceTtlMs;
  return {
    name: 'job-schedulers-keep',
    everyMs: deps.config.cluster.schedulerCheckMs,
    runAtStart: true,
    run: async ({ job, term, logger }) => {
      const putBack: string[] = [];
      let unconsumed = 0;
      for (const kept of queueKeys.flatMap(declared)) {
        const queue = queueOf(deps.queues, kept);
        if (await queue.getJobScheduler(kept.scheduler.id)) continue;
        if (!(await membersOf(deps.redis, deps.keys, queue.name, ttlMs)).length) {
          unconsumed++;
          continue;
        }
        if (!term.isCurrent()) break;
        await upsert(deps, kept);
        recreated.inc({ queue: queue.name, scheduler: kept.scheduler.id });
        logger.warn({ queue: queue.name, scheduler: kept.scheduler.id }, 'job scheduler was missing; put back');
        putBack.push(kept.scheduler.id);
      }
      if (putBack.length) await job.log(`put back: ${putBack.join(', ')}`);
      return { putBack, ...(unconsumed ? { unconsumed } : {}) };
    },
  };
}
