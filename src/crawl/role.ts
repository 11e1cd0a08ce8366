/**
 * The crawler worker role: consumes `crawl` jobs with CRAWLER_CONCURRENCY at once, each in its
 * own page of a shared headless Chromium, and enqueues every finished crawl to `crawl-result`.
 * It crawls `baseUrl`: CRAWL_BASE_URL, or with CRAWL_BASE_URL=embedded the fixture marketplace
 * the runtime serves for it (src/runtime/crawler-role.ts). Chromium is started on the first
 * page, not at role start.
 *
 * Stop order: no new jobs and active ones finish (worker grace period), then the browsers close.
 */
import { EMBEDDED_FIXTURE_URL } from '../config/crawl.js';
import type { PlatformContext, RoleHandle } from '../context.js';
import { createWorker } from '../queues/create-worker.js';
import { queues } from '../queues/definitions.js';
import { wireCrawl } from './wiring.js';

export interface CrawlerRoleHandle extends RoleHandle {
  /** Base URL being crawled (the embedded fixture marketplace's address when it runs). */
  baseUrl: string;
}

export async function startCrawlerRole(ctx: PlatformContext, baseUrl: string = ctx.config.crawl.baseUrl): Promise<CrawlerRoleHandle> {
  const c = ctx.config.crawl;
  const logger = ctx.logger.child({ role: 'crawler' });
  if (c.site === 'fixture' && baseUrl === EMBEDDED_FIXTURE_URL)
    throw new Error('CRAWL_BASE_URL=embedded: the runtime serves the fixture marketplace and passes its address (src/runtime/crawler-role.ts)');
  const { adapter, proxies, browsers, processor } = wireCrawl(ctx, baseUrl, logger);
  const worker = createWorker(ctx, 'crawl', processor, { concurrency: c.concurrency });
  logger.info({ site: adapter.name, baseUrl: adapter.baseUrl, concurrency: c.concurrency, proxies: proxies.map((p) => p.label) }, 'crawler started');

  let stopping: Promise<void> | undefined;
  return {
    name: 'crawler',
    queues: [queues.crawl.name],
    baseUrl: adapter.baseUrl,
    stop: () =>
      (stopping ??= (async () => {
        await worker.close();
        await browsers.close();
      })()),
  };
}
