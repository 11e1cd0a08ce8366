/**
 * One crawl task (reference 3.2, 3.3): fixed pages, on-sale pages first and then sold pages,
 * one after another, under a watchdog.
 *
 * - A page that fails (timeout, network, unknown) is recorded in `errors` and the crawl goes on
 *   with the next page; "no more results" ends that status early without an error.
 * - A blocked page ends the task: it is retried later as a whole (BlockedError: delayed, no
 *   attempt spent), because asking for more pages would only deepen the block.
 * - Blocked/timeout/network failures feed the proxy circuit breaker; a good page resets it.
 * - A browser crash, the watchdog, or every page failing fails the attempt (RetryableError), so
 *   BullMQ retries the task instead of publishing a result that is missing most items.
 *
 * Items are kept once per sourceId across pages; when an item shows up on an on-sale page and
 * then on a sold page (it sold during the crawl), the later sighting wins.
 */
import { BlockedError, RetryableError, toError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { CrawledItem, CrawlJobPayload, CrawlPageError, CrawlResultPayload } from '../queues/declarations/crawl.js';
import type { BrowserManager, PageLease } from './browser-manager.js';
import { classifyError, countsTowardsProxyBreaker } from './classify-error.js';
import { PageBlockedError } from './crawl-errors.js';
import type { CrawlMetrics } from './crawl-metrics.js';
import { fetchPage } from './fetch-page.js';
import type { ProxyBreaker } from './proxy-breaker.js';
import type { ItemStatus, SiteAdapter } from './site-adapter.js';

export interface CrawlSettings {
  taskTimeoutMs: number;
  pageTimeoutMs: number;
  networkIdleMs: number;
  scrollDelayMs: number;
  maxItemsPerPage: number;
  humanize: boolean;
  blockedRetryDelayMs: number;
}

export interface CrawlDeps {
  adapter: SiteAdapter;
  browsers: BrowserManager;
  breaker: ProxyBreaker;
  settings: CrawlSettings;
  metrics: CrawlMetrics;
}

/** Where a crawl stands, after each page (the job's progress). */
export interface CrawlProgress {
  pagesDone: number;
  pagesPlanned: number;
  items: number;
  /** Pages that failed (timeout, network, unknown) in this attempt. */
  errors: number;
  /** Blocked pages over every attempt of the task (each one delayed the task). */
  blocks: number;
  proxy: string;
}

export interface CrawlReporting {
  /** Called after each page with where the crawl stands and one line for the job's log. */
  report?: (progress: CrawlProgress, line: string) => Promise<void>;
  /** Blocks counted by the task's earlier attempts. */
  blocksBefore?: number;
}

export async function crawlTask(deps: CrawlDeps, task: CrawlJobPayload, logger: Logger, reporting: CrawlReporting = {}): Promise<CrawlResultPayload> {
  const { settings, metrics } = deps;
  const watchdog = new AbortController();
  const timer = setTimeout(() => watchdog.abort(), settings.taskTimeoutMs);
  const items = new Map<string, CrawledItem>();
  const errors: CrawlPageError[] = [];
  let pagesCrawled = 0;
  const pagesPlanned = task.pagesOnSale + task.pagesSold;
  const blocks = reporting.blocksBefore ?? 0;
  const report = (proxy: string, line: string, blocked = 0) =>
    reporting.report?.({ pagesDone: pagesCrawled, pagesPlanned, items: items.size, errors: errors.length, blocks: blocks + blocked, proxy }, line);
  let firstPage = true;
  const plan: [ItemStatus, number][] = [
    ['on_sale', task.pagesOnSale],
    ['sold', task.pagesSold],
  ];
  try {
    for (const [status, pages] of plan) {
      for (let page = 1; page <= pages; page++) {
        if (watchdog.signal.aborted) throw watchdogError(settings);
        const url = deps.adapter.searchUrl(task.keyword, status, page);
        const proxy = await deps.breaker.current();
        let lease: PageLease;
        try {
          lease = await deps.browsers.openPage(proxy);
        } catch (err) {
          throw new RetryableError(`no browser for the crawl: ${toError(err).message}`, 'browser_unavailable', { cause: err });
        }
        const started = performance.now();
        try {
          const outcome = await fetchPage({
            page: lease.page,
            adapter: deps.adapter,
            url,
            status,
            humanize: settings.humanize && firstPage,
            limit: settings.maxItemsPerPage,
            pageTimeoutMs: settings.pageTimeoutMs,
            networkIdleMs: settings.networkIdleMs,
            scrollDelayMs: settings.scrollDelayMs,
            signal: watchdog.signal,
          });
          firstPage = false;
          pagesCrawled += 1;
          for (const item of outcome.items) items.set(item.sourceId, item);
          const label = outcome.noMoreResults ? 'no_results' : 'ok';
          metrics.pages.inc({ outcome: label });
          metrics.pageDuration.observe({ outcome: label }, (performance.now() - started) / 1000);
          metrics.items.inc({ status }, outcome.items.length);
          logger.debug({ status, page, items: outcome.items.length, scrolls: outcome.scrolls, proxy: proxy?.label ?? 'direct' }, 'page crawled');
          await report(
            proxy?.label ?? 'direct',
            `${status} page ${page}: ${outcome.items.length} items${outcome.noMoreResults ? ' (no more results)' : ''} in ${Math.round(performance.now() - started)} ms via ${proxy?.label ?? 'direct'}`,
          );
          await deps.breaker.recordSuccess();
          if (outcome.noMoreResults) break;
        } catch (err) {
          firstPage = false;
          if (lease.browserLost()) {
            throw new RetryableError(`Chromium crashed during ${status} page ${page}`, 'browser_crashed', { cause: err });
          }
          if (watchdog.signal.aborted) throw watchdogError(settings);
          const errorClass = lease.drainTimedOut() ? 'timeout' : classifyError(err);
          const message = toError(err).message;
          errors.push({ status, page, errorClass, message: message.slice(0, 500) });
          metrics.pages.inc({ outcome: errorClass });
          metrics.pageDuration.observe({ outcome: errorClass }, (performance.now() - started) / 1000);
          logger.warn({ status, page, errorClass, err: message, proxy: proxy?.label ?? 'direct' }, 'page failed');
          if (countsTowardsProxyBreaker(errorClass)) await deps.breaker.recordFailure();
          if (errorClass === 'blocked') {
            const retryAfter = Math.max(settings.blockedRetryDelayMs, err instanceof PageBlockedError ? (err.retryAfterMs ?? 0) : 0);
            await report(
              proxy?.label ?? 'direct',
              `${status} page ${page} blocked (${message.slice(0, 200)}) via ${proxy?.label ?? 'direct'}; the crawl is retried in ${retryAfter} ms`,
              1,
            );
            throw new BlockedError(`${status} page ${page} blocked (${message}); retrying in ${retryAfter} ms`, retryAfter);
          }
          await report(
            proxy?.label ?? 'direct',
            `${status} page ${page} failed (${errorClass}: ${message.slice(0, 200)}) via ${proxy?.label ?? 'direct'}; going on`,
          );
        } finally {
          await lease.release();
        }
      }
    }
  } finally {
    clearTimeout(timer);
  }
  if (pagesCrawled === 0 && errors.length > 0) {
    throw new RetryableError(`every page failed: ${errors.map((e) => `${e.status} ${e.page} ${e.errorClass}`).join(', ')}`, 'all_pages_failed');
  }
  return {
    ipId: task.ipId,
    taskId: task.taskId,
    items: [...items.values()],
    totalFound: items.size,
    pagesCrawled,
    crawledAt: new Date().toISOString(),
    errors,
  };
}

function watchdogError(settings: CrawlSettings): RetryableError {
  return new RetryableError(`the crawl took longer than CRAWLER_TASK_TIMEOUT_MS (${settings.taskTimeoutMs} ms)`, 'timeout');
}
