/**
 * The crawl scheduler's periodic tasks, run by the leader on the `maintenance` queue
 * (src/coordination/maintenance-worker.ts):
 *
 *   crawl-reconcile          reconciliation of the IPs in the DB with the crawl chains and BullMQ
 *                            (scheduling/reconcile.ts), every SCHEDULER_RECONCILE_INTERVAL and
 *                            whenever a leader takes over (the start-up reconciliation)
 *   processed-results-trim   processed task ids older than PIPELINE_PROCESSED_RETENTION_DAYS,
 *                            in bounded batches, on the same period
 *
 * Both stop early when the leader's term ends (the next leader's runs finish the work).
 */
import type { PlatformContext } from '../context.js';
import type { MaintenanceTask } from '../coordination/maintenance-task.js';
import { createScheduler, type PipelineContext } from './wiring.js';
import { IpStore } from './ip-store.js';
import { ResultStore } from './result-store.js';
import { schedulerMetrics } from './scheduling/backpressure-loop.js';
import { reconcile } from './scheduling/reconcile.js';

const TRIM_BATCH = 10_000;
const TRIM_MAX_BATCHES = 100;

/** processed_results only has to outlive any re-delivery; trimmed in bounded batches. Returns the rows deleted. */
async function dropOldProcessedResults(results: Pick<ResultStore, 'dropProcessedBefore'>, retentionDays: number, signal?: AbortSignal): Promise<number> {
  const before = new Date(Date.now() - retentionDays * 86_400_000);
  let deleted = 0;
  for (let round = 0; round < TRIM_MAX_BATCHES && !signal?.aborted; round++) {
    const rowCount = await results.dropProcessedBefore(before, TRIM_BATCH);
    deleted += rowCount;
    if (!rowCount || rowCount < TRIM_BATCH) break;
  }
  return deleted;
}

export function crawlMaintenanceTasks(ctx: PipelineContext & Pick<PlatformContext, 'metrics'>): MaintenanceTask[] {
  const s = ctx.config.pipeline;
  const scheduler = createScheduler(ctx);
  const ips = new IpStore(ctx.db);
  const results = new ResultStore(ctx.db.pool);
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
    {
      name: 'processed-results-trim',
      everyMs: s.reconcileIntervalSeconds * 1000,
      run: async ({ job, signal }) => {
        const deleted = await dropOldProcessedResults(results, s.processedRetentionDays, signal);
        await job.log(`${deleted} processed task ids older than ${s.processedRetentionDays} days deleted`);
        return { deleted };
      },
    },
  ];
}
