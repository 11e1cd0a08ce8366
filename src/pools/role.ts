/**
 * The pools worker role: refills pools and marks consumed rows, as BullMQ work.
 * - queue pool-refill: `refill` jobs (one per pool at a time) and the periodic `check`, a job
 *   scheduler every POOL_CHECK_INTERVAL_MS (upserting it is idempotent across processes);
 * - queue pool-consumed: marking of popped rows in the DB, delayed (not failed) while the DB is down;
 * - at start the leader runs the check once: the prefill of every group that has rows.
 * Pops run in the API process (pool-service.ts); this role never serves rows.
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { isDatabaseUnavailable } from '../db/database-unavailable.js';
import { BlockedError, toError } from '../errors.js';
import { createWorker } from '../queues/create-worker.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import { checkPools } from './check-pools.js';
import { markConsumed } from './mark-consumed.js';
import { createPoolDeps } from './pool-context.js';
import { refillPool } from './refill-pool.js';

export const CHECK_SCHEDULER_ID = 'pools-check';
/** How long a job waits while the database or Redis is unreachable (no attempt spent). */
const DEPENDENCY_DOWN_RETRY_MS = 1000;
/** How often each pools process makes sure the check scheduler exists. */
const SCHEDULER_ENSURE_MS = 30_000;

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

export async function startPoolsRole(ctx: PlatformContext): Promise<RoleHandle> {
  const deps = createPoolDeps(ctx, 'pools');
  const { metrics, triggers, settings } = deps;

  const refillWorker = createWorker(ctx, 'poolRefill', async (job) => {
    const data = job.data;
    if (data.kind === 'check') {
      // The next check comes anyway: while the DB or Redis is down, skip instead of filling the dead jobs.
      return checkPools(deps).catch((err) => {
        if (dependencyDown(err)) return { skipped: isDatabaseUnavailable(err) ? 'database unavailable' : 'Redis unavailable' };
        throw err;
      });
    }
    const outcome = await whileDependenciesUp(() => refillPool(deps, data.type, data.groupId, { recover: data.recover ?? false }));
    if (outcome.status === 'refilled' || outcome.status === 'lock-lost') {
      metrics.refilled.inc({ type: data.type }, outcome.pushed);
      metrics.released.inc({ type: data.type }, outcome.released);
    }
    return outcome;
  });

  const consumedWorker = createWorker(ctx, 'poolConsumed', async (job) => {
    const { type, groupId } = job.data;
    const result = await whileDependenciesUp(() => markConsumed(deps, type, groupId));
    metrics.marked.inc({ type }, result.marked);
    if (result.more) await triggers.markConsumed(type, groupId);
    return result;
  });

  const refillQueue = ctx.queues.queue('poolRefill');
  const upsertCheck = () =>
    refillQueue.upsertJobScheduler(
      CHECK_SCHEDULER_ID,
      { every: settings.checkIntervalMs },
      { name: 'check', data: ctx.queues.validate('poolRefill', { kind: 'check' }), opts: { attempts: 1, removeOnComplete: { count: 10 }, removeOnFail: { count: 100 } } },
    );
  await upsertCheck();
  // A Redis that lost its data (FLUSHALL, a fresh replica) lost the scheduler too: put it back.
  const ensureCheck = setInterval(() => {
    refillQueue
      .getJobScheduler(CHECK_SCHEDULER_ID)
      .then((existing) => (existing ? undefined : upsertCheck().then(() => deps.logger.warn('pool check scheduler was missing; recreated'))))
      .catch(() => undefined);
  }, SCHEDULER_ENSURE_MS);
  ensureCheck.unref();

  ctx.leadership.whileLeader('pools-prefill', async () => {
    const prefill = await checkPools(deps).catch((err) => {
      deps.logger.warn({ err: toError(err).message }, 'pool prefill failed; the periodic check retries');
      return undefined;
    });
    if (prefill) deps.logger.info(prefill, 'pool prefill requested');
    return async () => undefined;
  });

  let stopping: Promise<void> | undefined;
  return {
    name: 'pools',
    queues: [refillWorker.queueName, consumedWorker.queueName],
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(ensureCheck);
        triggers.close();
        await Promise.all([refillWorker.close(), consumedWorker.close()]);
      })()),
  };
}
