/**
 * The crawl scheduling's wiring: the IP store and the crawl scheduler, built from the platform
 * context. The scheduler consults two things of the result pipeline (its processed results and
 * the IP detail cache), which the caller gives: the pipeline's wiring (src/pipeline/wiring.ts)
 * builds crawl scheduling with them; crawl scheduling never imports the pipeline.
 */
import type { PlatformContext } from '../context.js';
import { CrawlScheduler, type PipelineLinks } from './crawl-scheduler.js';
import { IpStore } from './ip-store.js';

export type SchedulingContext = Pick<PlatformContext, 'config' | 'logger' | 'keys' | 'redis' | 'queues' | 'db'>;

export interface CrawlScheduling {
  ips: IpStore;
  scheduler: CrawlScheduler;
}

export function wireCrawlScheduling(ctx: SchedulingContext, pipeline: PipelineLinks): CrawlScheduling {
  const ips = new IpStore(ctx.db);
  const scheduler = new CrawlScheduler({
    queues: ctx.queues,
    redis: ctx.redis,
    keys: ctx.keys,
    ips,
    results: pipeline.results,
    caches: pipeline.caches,
    settings: ctx.config.pipeline,
    logger: ctx.logger,
  });
  return { ips, scheduler };
}
