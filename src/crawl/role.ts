/**
 * The crawler worker role: consumes `crawl` jobs with CRAWLER_CONCURRENCY at once, each in its
 * own page of a shared headless Chromium, and enqueues every finished crawl to `crawl-result`.
 * It crawls `baseUrl`: CRAWL_BASE_URL, or with CRAWL_BASE_URL=embedded the fixture marketplace
 * the runtime serves for it (src/runtime/crawler-role.ts). Chromium is started on the first
 * page, not at role start.
 *
 * Stop order: no new jobs and active ones finish (worker grace period), then the browsers close.
 */
import path from 'node:path';
import { EMBEDDED_FIXTURE_URL } from '../config/crawl.js';
import type { PlatformContext, RoleHandle } from '../context.js';
import { OutboundPolicy } from '../net/outbound-policy.js';
import { createWorker } from '../queues/create-worker.js';
import { queues } from '../queues/definitions.js';
import { createSiteAdapter } from './adapters/create-site-adapter.js';
import { BrowserManager } from './browser-manager.js';
import { CrawlMetrics } from './crawl-metrics.js';
import { createCrawlProcessor } from './process-crawl-job.js';
import { ProxyBreaker } from './proxy-breaker.js';
import { checkProxy } from './proxy-health-check.js';
import { parseProxy } from './proxy-url.js';
import { RequestGuard } from './request-guard.js';

export interface CrawlerRoleHandle extends RoleHandle {
  /** Base URL being crawled (the embedded fixture marketplace's address when it runs). */
  baseUrl: string;
}

export async function startCrawlerRole(ctx: PlatformContext, baseUrl: string = ctx.config.crawl.baseUrl): Promise<CrawlerRoleHandle> {
  const c = ctx.config.crawl;
  const logger = ctx.logger.child({ role: 'crawler' });
  const proxies = c.proxyList.map(parseProxy);
  if (c.site === 'fixture' && baseUrl === EMBEDDED_FIXTURE_URL)
    throw new Error('CRAWL_BASE_URL=embedded: the runtime serves the fixture marketplace and passes its address (src/runtime/crawler-role.ts)');
  const adapter = createSiteAdapter(c.site, baseUrl);
  const metrics = new CrawlMetrics(ctx.metrics);
  // The operator's own site is trusted; whatever else the browser is led to (a redirect off the
  // site, a frame or script on another host) goes through the outbound policy (OUTBOUND_ALLOW).
  const requestGuard = new RequestGuard({
    policy: OutboundPolicy.fromEntries(ctx.config.outbound.allow),
    trustedOrigins: [adapter.baseUrl],
    onRefused: (r) =>
      r.navigation ? logger.warn(r, 'crawler navigation refused by the outbound policy') : logger.debug(r, 'crawler request refused by the outbound policy'),
  });
  const browsers = new BrowserManager({
    chromiumPath: c.chromiumPath,
    profileRoot: path.join(ctx.config.derived.dataDir, 'chromium'),
    maxPages: c.concurrency,
    pagesPerBrowser: c.pagesPerBrowser,
    drainTimeoutMs: c.drainTimeoutMs,
    protocolTimeoutMs: Math.max(30_000, c.pageTimeoutMs * 2),
    logger,
    metrics,
    requestGuard,
  });
  const breaker = new ProxyBreaker({
    redis: ctx.redis,
    key: ctx.keys.proxyBreaker(),
    proxies,
    threshold: c.proxyFailureThreshold,
    cooldownMs: c.proxyCooldownMinutes * 60_000,
    healthCheckTimeoutMs: c.proxyHealthCheckTimeoutMs,
    healthCheck: (proxy) => checkProxy(proxy, adapter.healthCheckUrl(), c.proxyHealthCheckTimeoutMs),
    logger,
    onSwitch: () => metrics.proxySwitches.inc(),
    onFailures: (n) => metrics.proxyFailures.set(n),
  });
  const worker = createWorker(
    ctx,
    'crawl',
    createCrawlProcessor({
      adapter,
      browsers,
      breaker,
      metrics,
      queues: ctx.queues,
      instanceId: ctx.instanceId,
      settings: {
        taskTimeoutMs: c.taskTimeoutMs,
        pageTimeoutMs: c.pageTimeoutMs,
        networkIdleMs: c.networkIdleMs,
        scrollDelayMs: c.scrollDelayMs,
        maxItemsPerPage: c.maxItemsPerPage,
        humanize: c.humanize,
        blockedRetryDelayMs: c.blockedRetryDelayMs,
      },
    }),
  );
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
