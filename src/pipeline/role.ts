/**
 * The pipeline role: the `crawl-result` worker (the parents of the crawls' flows, PIPELINE_CONCURRENCY
 * at once) and, on the leader of the `crawl-scheduler` singleton task, the backpressure loop. The crawl
 * scheduler's other periodic work (reconciliation, processed-id trim) runs on the `maintenance`
 * queue (maintenance-tasks.ts). See docs/pipeline.md.
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { createWorker } from '../queues/create-worker.js';
import { createResultPipeline, createScheduler } from './wiring.js';
import { createResultJobProcessor } from './process-result-job.js';
import { schedulerMetrics, startBackpressureLoop } from './scheduling/backpressure-loop.js';
import { IpStore } from './ip-store.js';

export async function startPipelineRole(ctx: PlatformContext): Promise<RoleHandle> {
  const logger = ctx.logger.child({ role: 'pipeline' });
  const scheduler = createScheduler(ctx);
  const results = ctx.metrics.counter('wp_pipeline_results_total', 'Crawl results by outcome (processed, baseline, duplicate, skipped, crawl_failed).', [
    'status',
  ]);
  const transitions = ctx.metrics.counter('wp_pipeline_transitions_total', 'Item state transitions by kind.', ['kind']);
  const pipeline = createResultPipeline(ctx, scheduler, (o) => {
    results.inc({ status: o.baseline ? 'baseline' : o.status });
    for (const [kind, n] of Object.entries(o.transitions ?? {})) if (n) transitions.inc({ kind }, n);
  });
  const metrics = schedulerMetrics(ctx.metrics);
  const scheduled = ctx.metrics.gauge('wp_scheduler_scheduled_ips', 'IPs with a crawl chain (pending, running or in the pipeline).');
  ctx.metrics.onScrape(async () => scheduled.set(await scheduler.chain.size()));
  const activeIps = ctx.metrics.gauge('wp_ips_active', 'Active IPs (crawled on their interval).');
  const overdueIps = ctx.metrics.gauge('wp_ips_crawl_overdue', 'Active IPs not crawled for more than twice their interval (never crawled: since created).');
  const ips = new IpStore(ctx.db);
  ctx.metrics.onScrape(async () => {
    const health = await ips.crawlHealth();
    activeIps.set(health.active);
    overdueIps.set(health.overdue);
  });

  const worker = createWorker(
    ctx,
    'crawlResult',
    createResultJobProcessor({
      pipeline,
      scheduler,
      onRescheduled: (queue) => metrics.finalFailures.inc({ queue }),
      onNoResult: () => results.inc({ status: 'crawl_failed' }),
    }),
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
