/**
 * The pools worker role: refills pools and marks consumed rows, as BullMQ work.
 * - queue pool-refill: `refill` jobs (one per pool at a time) and the periodic `check`, a job
 *   scheduler every POOL_CHECK_INTERVAL_MS (upserting it is idempotent across processes; kept by
 *   job-scheduler-keeper.ts);
 * - queue pool-consumed: marking of popped rows in the DB;
 * - at start one `check` job more, the prefill of every group that has rows (deduplicated: pools
 *   processes starting together add one).
 * A refill or a marking that meets an outage of the DB or Redis is delayed, not failed, by the
 * worker factory (no attempt spent); a `check` meeting one is skipped instead (the next one comes anyway).
 * Pops run in the API process (pool-service.ts); this role never serves rows.
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { dependencyDown } from '../lib/dependency-down.js';
import { createWorker } from '../queues/create-worker.js';
import { keepJobScheduler } from '../queues/job-scheduler-keeper.js';
import { checkPools } from './check-pools.js';
import { markConsumed } from './mark-consumed.js';
import { wirePools } from './wiring.js';
import { refillPool, type RefillOutcome } from './refill-pool.js';

export const CHECK_SCHEDULER_ID = 'pools-check';
/** The prefill `check` job at start; pools processes starting together add one. */
const PREFILL_DEDUP_ID = 'pools-prefill';

function describeRefill(type: string, groupId: number, o: RefillOutcome): string {
  const pool = `${type} group ${groupId}`;
  if (o.status === 'full') return `${pool}: ${o.length} items pooled, above the threshold; nothing to do`;
  if (o.status === 'locked') return `${pool}: another refill holds the pool`;
  const released = o.released ? `, ${o.released} orphaned reserved rows made available again` : '';
  if (o.status === 'lock-lost') return `${pool}: ${o.pushed} rows pushed, then the refill lost its lock${released}`;
  return `${pool}: ${o.pushed} rows pushed, ${o.length} pooled${released}`;
}

export async function startPoolsRole(ctx: PlatformContext): Promise<RoleHandle> {
  const deps = wirePools(ctx, 'pools');
  const { metrics, triggers, settings } = deps;

  const refillWorker = createWorker(ctx, 'poolRefill', async (job) => {
    const data = job.data;
    if (data.kind === 'check') {
      // The next check comes anyway: while the DB or Redis is down, skip instead of filling the dead jobs.
      return checkPools({ ...deps, groups: (type) => ctx.sharedConfig.current()?.content.poolGroups[type] }).catch((err) => {
        const down = dependencyDown(err);
        if (down) return { skipped: down === 'database' ? 'database unavailable' : 'Redis unavailable' };
        throw err;
      });
    }
    // Progress is for people: a Redis hiccup while reporting must not fail the refill.
    const onPushed = (p: { pushed: number; length: number }) => job.updateProgress({ type: data.type, groupId: data.groupId, ...p }).catch(() => undefined);
    const outcome = await refillPool(deps, data.type, data.groupId, { recover: data.recover ?? false, onPushed });
    if (outcome.status === 'refilled' || outcome.status === 'lock-lost') {
      metrics.refilled.inc({ type: data.type }, outcome.pushed);
      metrics.released.inc({ type: data.type }, outcome.released);
    }
    await job.log(describeRefill(data.type, data.groupId, outcome)).catch(() => undefined);
    return outcome;
  });

  const consumedWorker = createWorker(ctx, 'poolConsumed', async (job) => {
    const { type, groupId } = job.data;
    const result = await markConsumed(deps, type, groupId);
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
