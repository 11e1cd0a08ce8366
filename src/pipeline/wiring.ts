/**
 * Builds the pipeline domain's objects from a platform context. The API role (routes) and the
 * pipeline role each build their own; they share nothing but Redis and the database.
 */
import type { PlatformContext } from '../context.js';
import { IpService } from './ip-service.js';
import { ItemStateStore } from './item-state-store.js';
import { PipelineCaches } from './pipeline-caches.js';
import { IpStore } from './ip-store.js';
import { ResultPipeline, type ResultOutcome } from './process-result.js';
import { ResultStore } from './result-store.js';
import { CrawlScheduler } from './scheduling/crawl-scheduler.js';

export type PipelineContext = Pick<PlatformContext, 'config' | 'logger' | 'keys' | 'redis' | 'queues' | 'db'>;

export function createScheduler(ctx: PipelineContext): CrawlScheduler {
  return new CrawlScheduler({
    queues: ctx.queues,
    redis: ctx.redis,
    keys: ctx.keys,
    ips: new IpStore(ctx.db),
    results: new ResultStore(ctx.db.pool),
    settings: ctx.config.pipeline,
    logger: ctx.logger,
    caches: createCaches(ctx),
  });
}

function createCaches(ctx: PipelineContext): PipelineCaches {
  return new PipelineCaches(ctx.redis, ctx.keys, ctx.config.pipeline.cacheTtlSeconds, ctx.logger);
}

export function createIpService(ctx: PipelineContext, scheduler = createScheduler(ctx)): IpService {
  return new IpService({ ips: new IpStore(ctx.db), scheduler, caches: createCaches(ctx), settings: ctx.config.pipeline });
}

export function createResultPipeline(ctx: PipelineContext, scheduler = createScheduler(ctx), onOutcome?: (o: ResultOutcome) => void): ResultPipeline {
  const s = ctx.config.pipeline;
  return new ResultPipeline({
    results: new ResultStore(ctx.db.pool),
    ips: new IpStore(ctx.db),
    states: new ItemStateStore(ctx.redis, ctx.keys, {
      batchSize: s.stateBatchSize,
      ttlOnSaleSeconds: s.itemTtlOnSaleSeconds,
      ttlSoldSeconds: s.itemTtlSoldSeconds,
    }),
    scheduler,
    caches: createCaches(ctx),
    rules: s,
    logger: ctx.logger.child({ component: 'result-pipeline' }),
    ...(onOutcome ? { onOutcome } : {}),
  });
}
