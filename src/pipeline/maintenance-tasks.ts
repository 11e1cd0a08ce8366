/**
 * The result pipeline's periodic task, run by the leader on the `maintenance` queue
 * (src/queues/maintenance-worker.ts): `processed-results-trim`, the processed task ids older than
 * PIPELINE_PROCESSED_RETENTION_DAYS deleted in bounded batches, every SCHEDULER_RECONCILE_INTERVAL.
 * It stops early when the leader's term ends (the next run finishes the work).
 */
import type { PlatformContext } from '../context.js';
import type { MaintenanceTask } from '../queues/maintenance-task.js';
import type { ResultStore } from './result-store.js';

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

export function pipelineMaintenanceTasks(ctx: Pick<PlatformContext, 'config'>, results: Pick<ResultStore, 'dropProcessedBefore'>): MaintenanceTask[] {
  const s = ctx.config.pipeline;
  return [
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
