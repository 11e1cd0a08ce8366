/**
 * The crawler's wiring: the site adapter for `baseUrl`, the browser manager with its request
 * guard, the proxy breaker and the `crawl` job processor over them, built from the platform
 * context once per crawler role (role.ts starts the worker and stops the browsers).
 *
 * The operator's own site (CRAWL_BASE_URL) is trusted; whatever else the browser is led to (a
 * redirect off the site, a frame or script on another host) goes through the outbound policy
 * (OUTBOUND_ALLOW).
 */
import path from 'node:path';
import type { PlatformContext } from '../context.js';
import type { Logger } from '../logging/logger.js';
import { OutboundPolicy } from '../net/outbound-policy.js';
import type { JobProcessor } from '../queues/create-worker.js';
import type { CrawlResultPayload } from '../queues/payloads/crawl.js';
import { createSiteAdapter } from './adapters/create-site-adapter.js';
import { BrowserManager } from './browser-manager.js';
import { CrawlMetrics } from './crawl-metrics.js';
import { createCrawlProcessor } from './process-crawl-job.js';
import { ProxyBreaker } from './proxy-breaker.js';
import { checkProxy } from './proxy-health-check.js';
import { parseProxy, type ProxyConfig } from './proxy-url.js';
import { RequestGuard } from './request-guard.js';
import type { SiteAdapter } from './site-adapter.js';

export interface CrawlerWiring {
  adapter: SiteAdapter;
  proxies: ProxyConfig[];
  browsers: BrowserManager;
  processor: JobProcessor<'crawl', CrawlResultPayload>;
}

export function wireCrawl(
  ctx: Pick<PlatformContext, 'config' | 'metrics' | 'redis' | 'keys' | 'queues' | 'instanceId'>,
  baseUrl: string,
  logger: Logger,
): CrawlerWiring {
  const c = ctx.config.crawl;
  const proxies = c.proxyList.map(parseProxy);
  const adapter = createSiteAdapter(c.site, baseUrl);
  const metrics = new CrawlMetrics(ctx.metrics);
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
  const processor = createCrawlProcessor({
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
  });
  return { adapter, proxies, browsers, processor };
}
