/**
 * The crawl scheduler's periodic task, run by the leader on the `maintenance` queue
 * (src/queues/maintenance-worker.ts): `crawl-reconcile`, the reconciliation of the IPs in the DB
 * with the crawl chains and BullMQ (reconcile.ts), every SCHEDULER_RECONCILE_INTERVAL and whenever
 * a leader takes over (the start-up reconciliation). It stops early when the leader's term ends
 * (the next leader's run finishes the work).
 */
import type { PlatformContext } from '../context.js';
import type { MaintenanceTask } from '../queues/maintenance-task.js';
import { reconcile } from './reconcile.js';
import { schedulerMetrics } from './scheduler-metrics.js';
import type { CrawlScheduling } from './wiring.js';

export function crawlSchedulingMaintenanceTasks(
  ctx: Pick<PlatformContext, 'config' | 'redis' | 'metrics'>,
  { scheduler, ips }: CrawlScheduling,
): MaintenanceTask[] {
  const s = ctx.config.pipeline;
  const { reconciled } = schedulerMetrics(ctx.metrics);
  return [
    {
      name: 'crawl-reconcile',
      everyMs: s.reconcileIntervalSeconds * 1000,
      runAtStart: true,
      run: async ({ job, signal, logger }) => {
        // Every crawl it adds is delayed at least one tick, so the backpressure loop sees it before BullMQ promotes it.
        const report = await reconcile({ scheduler, ips, redis: ctx.redis, logger, spreadSeconds: s.spreadSeconds, leadMs: s.tickMs, signal });
        for (const action of ['scheduled', 'reAdded', 'advanced', 'orphansRemoved', 'released'] as const) {
          if (report[action]) reconciled.inc({ action }, report[action]);
        }
        await job.log(
          `${report.activeIps} active IPs: ${report.scheduled} scheduled, ${report.reAdded} re-added, ${report.advanced} advanced, ${report.orphansRemoved} orphans removed, ${report.released} released (${report.ms} ms)${signal.aborted ? '; stopped early: the leader term ended' : ''}`,
        );
        return report;
      },
    },
  ];
}
