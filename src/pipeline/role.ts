/**
 * The pipeline role: the `crawl-result` worker (the parents of the crawls' flows, PIPELINE_CONCURRENCY
 * at once) and, on the leader of the `crawl-scheduler` singleton task, crawl scheduling's
 * backpressure loop (src/crawl-scheduling/backpressure-loop.ts). The periodic work of both
 * (reconciliation, processed-id trim) runs on the `maintenance` queue (maintenance-tasks.ts here and
 * in src/crawl-scheduling). See docs/pipeline.md.
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { createWorker } from '../queues/create-worker.js';
import { startBackpressureLoop } from '../crawl-scheduling/backpressure-loop.js';
import { exportSchedulingGauges, schedulerMetrics } from '../crawl-scheduling/scheduler-metrics.js';
import { createResultJobProcessor } from './process-result-job.js';
import { wirePipeline } from './wiring.js';

export async function startPipelineRole(ctx: PlatformContext): Promise<RoleHandle> {
  const logger = ctx.logger.child({ role: 'pipeline' });
  const results = ctx.metrics.counter('wp_pipeline_results_total', 'Crawl results by outcome (processed, baseline, duplicate, skipped, crawl_failed).', [
    'status',
  ]);
  const transitions = ctx.metrics.counter('wp_pipeline_transitions_total', 'Item state transitions by kind.', ['kind']);
  const { scheduler, ips, pipeline } = wirePipeline(ctx, (o) => {
    results.inc({ status: o.baseline ? 'baseline' : o.status });
    for (const [kind, n] of Object.entries(o.transitions ?? {})) if (n) transitions.inc({ kind }, n);
  });
  const metrics = schedulerMetrics(ctx.metrics);
  exportSchedulingGauges(ctx.metrics, scheduler, ips, () => ctx.leadership.isLeader('crawl-scheduler'));

  const worker = createWorker(
    ctx,
    'crawlResult',
    createResultJobProcessor({
      pipeline,
      scheduler,
      onRescheduled: (queue) => metrics.finalFailures.inc({ queue }),
      onNoResult: () => results.inc({ status: 'crawl_failed' }),
    }),
    { concurrency: ctx.config.pipeline.concurrency },
  );

  ctx.leadership.whileLeader('crawl-scheduler', async (term) =>
    startBackpressureLoop({ scheduler, redis: ctx.redis, settings: ctx.config.pipeline, metrics: ctx.metrics, logger }, term),
  );

  let stopping: Promise<void> | undefined;
  return {
    name: 'pipeline',
    queues: worker.queueNames,
    // The backpressure loop stops with the lease (released by the leadership after the roles stopped).
    stop: () => (stopping ??= worker.close()),
  };
}
