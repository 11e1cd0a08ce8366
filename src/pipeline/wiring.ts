/**
 * The pipeline's wiring, built from the platform context by each user of it (the pipeline role,
 * the leader's maintenance tasks, the API); they share nothing but Redis and the database. The
 * pipeline builds on crawl scheduling (src/crawl-scheduling/wiring.ts): it builds the crawl
 * scheduler with the two things of its own the scheduler consults (processed results, the IP
 * detail cache), so that one set of objects serves both.
 */
import type { CrawlScheduler } from '../crawl-scheduling/crawl-scheduler.js';
import type { IpStore } from '../crawl-scheduling/ip-store.js';
import { wireCrawlScheduling, type SchedulingContext } from '../crawl-scheduling/wiring.js';
import { IpService } from './ip-service.js';
import { ItemStateStore } from './item-state-store.js';
import { PipelineCaches } from './pipeline-caches.js';
import { ResultPipeline, type ResultOutcome } from './process-result.js';
import { ResultStore } from './result-store.js';

export type PipelineContext = SchedulingContext;

export interface PipelineWiring {
  ips: IpStore;
  scheduler: CrawlScheduler;
  results: ResultStore;
  caches: PipelineCaches;
  /** The result pipeline (process-result.ts); `onOutcome` is called with each outcome (metrics). */
  pipeline: ResultPipeline;
}

export function wirePipeline(ctx: PipelineContext, onOutcome?: (o: ResultOutcome) => void): PipelineWiring {
  const s = ctx.config.pipeline;
  const caches = new PipelineCaches(ctx.redis, ctx.keys, s.cacheTtlSeconds, ctx.logger);
  const results = new ResultStore(ctx.db);
  const { ips, scheduler } = wireCrawlScheduling(ctx, { results, caches });
  const pipeline = new ResultPipeline({
    results,
    ips,
    states: new ItemStateStore(ctx.redis, ctx.keys, {
      batchSize: s.stateBatchSize,
      ttlOnSaleSeconds: s.itemTtlOnSaleSeconds,
      ttlSoldSeconds: s.itemTtlSoldSeconds,
    }),
    scheduler,
    caches,
    rules: s,
    logger: ctx.logger.child({ component: 'result-pipeline' }),
    ...(onOutcome ? { onOutcome } : {}),
  });
  return { ips, scheduler, results, caches, pipeline };
}

/** The service the API's IP routes call. */
export function wirePipelineApi(ctx: PipelineContext, wiring: PipelineWiring = wirePipeline(ctx)): IpService {
  return new IpService({ ips: wiring.ips, results: wiring.results, scheduler: wiring.scheduler, caches: wiring.caches, settings: ctx.config.pipeline });
}
