/**
 * The feeds' periodic task, run by the leader on the `maintenance` queue
 * (src/queues/maintenance-worker.ts):
 *
 *   feeds-reconcile   every feed gets back its one periodic chain if Redis lost it
 *                     (reconcile-chains.ts), every FEED_RECONCILE_INTERVAL_SECONDS (0: only when
 *                     a leader takes over) and whenever a leader takes over
 */
import type { PlatformContext } from '../context.js';
import type { MaintenanceTask } from '../queues/maintenance-task.js';
import { createFeedServices } from './feed-services.js';
import { reconcileChains } from './reconcile-chains.js';

export function feedMaintenanceTasks(ctx: Pick<PlatformContext, 'config' | 'db' | 'redis' | 'keys' | 'queues'>): MaintenanceTask[] {
  const { scheduler } = createFeedServices(ctx);
  return [
    {
      name: 'feeds-reconcile',
      everyMs: ctx.config.feeds.reconcileIntervalSeconds * 1000,
      runAtStart: true,
      run: async ({ job, signal, logger }) => {
        const report = await reconcileChains({ prisma: ctx.db.prisma, scheduler, logger, signal });
        await job.log(`${report.checked} feeds checked, ${report.repaired} chains repaired${signal.aborted ? '; stopped early: the leader term ended' : ''}`);
        return report;
      },
    },
  ];
}
