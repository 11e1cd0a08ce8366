/**
 * The pipeline role: the `crawl-result` worker (one result at a time per job, PIPELINE_CONCURRENCY
 * at once) and, on the leader only, the crawl scheduler's singleton loop.
 *
 * Crawl and result processing are two chained queues: the scheduler adds a `crawl` job per IP
 * (job id = task id); the crawler, when the crawl ends, adds `crawl-result` job
 * `result-<taskId>` and completes; this role's worker processes the result and schedules the
 * IP's next crawl. See README, section "Crawl scheduling and the result pipeline".
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { PermanentError } from '../errors.js';
import { crawlResultPayload } from '../queues/payloads/crawl.js';
import { createWorker } from '../queues/create-worker.js';
import { createResultPipeline, createScheduler } from './components.js';
import { SchedulerLoop, schedulerMetrics } from './scheduling/scheduler-loop.js';
import { countCrawlHealth } from './ip-queries.js';

export async function startPipelineRole(ctx: PlatformContext): Promise<RoleHandle> {
  const logger = ctx.logger.child({ role: 'pipeline' });
  const scheduler = createScheduler(ctx);
  const results = ctx.metrics.counter('wp_pipeline_results_total', 'Crawl results by outcome (processed, duplicate, skipped).', ['status']);
  const transitions = ctx.metrics.counter('wp_pipeline_transitions_total', 'Item state transitions by kind.', ['kind']);
  const pipeline = createResultPipeline(ctx, scheduler, (o) => {
    results.inc({ status: o.status });
    for (const [kind, n] of Object.entries(o.transitions ?? {})) if (n) transitions.inc({ kind }, n);
  });
  const scheduled = ctx.metrics.gauge('wp_scheduler_scheduled_ips', 'IPs with a crawl chain (pending, running or in the pipeline).');
  ctx.metrics.onScrape(async () => scheduled.set(await scheduler.chain.size()));
  const activeIps = ctx.metrics.gauge('wp_ips_active', 'Active IPs (crawled on their interval).');
  const overdueIps = ctx.metrics.gauge('wp_ips_crawl_overdue', 'Active IPs not crawled for more than twice their interval (never crawled: since created).');
  ctx.metrics.onScrape(async () => {
    const health = await countCrawlHealth(ctx.db);
    activeIps.set(health.active);
    overdueIps.set(health.overdue);
  });

  const worker = createWorker(
    ctx,
    'crawlResult',
    async (job) => {
      const parsed = crawlResultPayload.safeParse(job.data);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new PermanentError(`invalid crawl result: ${issue.path.join('.')}: ${issue.message}`, 'invalid_payload');
      }
      return pipeline.process(parsed.data);
    },
    { concurrency: ctx.config.pipeline.concurrency },
  );

  schedulerMetrics(ctx.metrics);
  let loop: SchedulerLoop | undefined;
  ctx.leadership.whileLeader('crawl-scheduler', async () => {
    loop = new SchedulerLoop({ scheduler, db: ctx.db, redis: ctx.redis, connections: ctx.connections, keys: ctx.keys, settings: ctx.config.pipeline, metrics: ctx.metrics, logger });
    const mine = loop;
    await mine.start();
    return () => mine.stop();
  });

  let stopping: Promise<void> | undefined;
  return {
    name: 'pipeline',
    queues: [worker.queueName],
    stop: () =>
      (stopping ??= (async () => {
        await loop?.stop();
        await worker.close();
      })()),
  };
}
