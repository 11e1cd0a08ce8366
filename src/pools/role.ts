/**
 * The pools worker role: refills pools and marks consumed rows, as BullMQ work.
 * - queue pool-refill: `refill` jobs (one per pool at a time) and the periodic `check`, a job
 *   scheduler every POOL_CHECK_INTERVAL_MS (upserting it is idempotent across processes; kept by
 *   job-scheduler-keeper.ts);
 * - queue pool-consumed: marking of popped rows in the DB, delayed (not failed) while the DB is down;
 * - at start one `check` job more, the prefill of every group that has rows (deduplicated: pools
 *   processes starting together add one).
 * Pops run in the API process (pool-service.ts); this role never serves rows.
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { isDatabaseUnavailable } from '../db/database-unavailable.js';
import { BlockedError, toError } from '../errors.js';
import { createWorker } from '../queues/create-worker.js';
import { keepJobScheduler } from '../queues/job-scheduler-keeper.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import { checkPools } from './check-pools.js';
import { markConsumed } from './mark-consumed.js';
import { createPoolDeps } from './wiring.js';
import { refillPool, type RefillOutcome } from './refill-pool.js';

export const CHECK_SCHEDULER_ID = 'pools-check';
/** How long a job waits while the database or Redis is unreachable (no attempt spent). */
const DEPENDENCY_DOWN_RETRY_MS = 1000;
/** The prefill `check` job at start; pools processes starting together add one. */
const PREFILL_DEDUP_ID = 'pools-prefill';

/** Refills and marking read the database and write Redis: either one down delays the job. */
const dependencyDown = (err: unknown) => isDatabaseUnavailable(err) || isRedisUnavailable(err);

async function whileDependenciesUp<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw new BlockedError(`database unavailable: ${toError(err).message}`, DEPENDENCY_DOWN_RETRY_MS);
    if (isRedisUnavailable(err)) throw new BlockedError(`Redis unavailable: ${toError(err).message}`, DEPENDENCY_DOWN_RETRY_MS);
    throw err;
  }
}

function describeRefill(type: string, groupId: number, o: RefillOutcome): string {
  const pool = `${type} group ${groupId}`;
  if (o.status === 'full') return `${pool}: ${o.length} items pooled, above the threshold; nothing to do`;
  if (o.status === 'locked') return `${pool}: another refill holds the pool`;
  const released = o.released ? `, ${o.released} orphaned reserved rows made available again` : '';
  if (o.status === 'lock-lost') return `${pool}: ${o.pushed} rows pushed, then the refill lost its lock${released}`;
  return `${pool}: ${o.pushed} rows pushed, ${o.length} pooled${released}`;
}

export async function startPoolsRole(ctx: PlatformContext): Promise<RoleHandle> {
  const deps = createPoolDeps(ctx, 'pools');
  const { metrics, triggers, settings } = deps;

  const refillWorker = createWorker(ctx, 'poolRefill', async (job) => {
    const data = job.data;
    if (data.kind === 'check') {
      // The next check comes anyway: while the DB or Redis is down, skip instead of filling the dead jobs.
      return checkPools({ ...deps, groups: (type) => ctx.sharedConfig.current()?.content.poolGroups[type] }).catch((err) => {
        if (dependencyDown(err)) return { skipped: isDatabaseUnavailable(err) ? 'database unavailable' : 'Redis unavailable' };
        throw err;
      });
    }
    // Progress is for people: a Redis hiccup while reporting must not fail the refill.
    const onPushed = (p: { pushed: number; length: number }) => job.updateProgress({ type: data.type, groupId: data.groupId, ...p }).catch(() => undefined);
    const outcome = await whileDependenciesUp(() => refillPool(deps, data.type, data.groupId, { recover: data.recover ?? false, onPushed }));
    if (outcome.status === 'refilled' || outcome.status === 'lock-lost') {
      metrics.refilled.inc({ type: data.type }, outcome.pushed);
      metrics.released.inc({ type: data.type }, outcome.released);
    }
    await job.log(describeRefill(data.type, data.groupId, outcome)).catch(() => undefined);
    return outcome;
  });

  const consumedWorker = createWorker(ctx, 'poolConsumed', async (job) => {
    const { type, groupId } = job.data;
    const result = await whileDependenciesUp(() => markConsumed(deps, type, groupId));
    metrics.marked.inc({ type }, result.marked);
    await job
      .log(`${type} group ${groupId}: ${result.marked} rows marked consumed${result.more ? '; more waiting, a follow-up queued' : ''}`)
      .catch(() => undefined);
    if (result.more) await triggers.markConsumed(type, groupId);
    return result;
  });

  const checkOpts = { attempts: 1, removeOnComplete: { count: 10 }, removeOnFail: { count: 100 } };
  const stopKeeping = await keepJobScheduler(
    {
      queue: ctx.queues.queue('poolRefill'),
      id: CHECK_SCHEDULER_ID,
      everyMs: settings.checkIntervalMs,
      template: { name: 'check', data: ctx.queues.validate('poolRefill', { kind: 'check' }), opts: checkOpts },
    },
    { metrics: ctx.metrics, logger: deps.logger },
  );
  await ctx.queues.add('poolRefill', 'check', { kind: 'check' }, { ...checkOpts, deduplication: { id: PREFILL_DEDUP_ID } });

  let stopping: Promise<void> | undefined;
  return {
    name: 'pools',
    queues: [...refillWorker.queueNames, ...consumedWorker.queueNames],
    stop: () =>
      (stopping ??= (async () => {
        stopKeeping();
        triggers.close();
        await Promise.all([refillWorker.close(), consumedWorker.close()]);
      })()),
  };
}
