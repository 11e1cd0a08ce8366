/**
 * One crawl task (reference 3.2, 3.3): fixed pages, on-sale pages first and then sold pages,
 * one after another, under a watchdog. For each page, in `crawlTask`:
 *
 *   1. the watchdog: past CRAWLER_TASK_TIMEOUT_MS the attempt fails (retried by BullMQ);
 *   2. the page, fetched in a fresh tab through the proxy the breaker names (fetch-page.ts);
 *   3. what that means (page-outcome.ts, pure): go on, skip to the next status, stop delayed
 *      (a block), or fail the attempt (no browser, a crash, the watchdog);
 *   4. recorded: the items or the page's error, metrics, the job's progress and log line, the
 *      proxy breaker (a good page resets it; blocked/timeout/network failures count towards it);
 *   then, once every page is done,
 *   5. the result, unless every page failed (the attempt fails rather than publish a result
 *      missing most items).
 *
 * A blocked page ends the task: it is retried later as a whole (BlockedError: delayed, no
 * attempt spent), because asking for more pages would only deepen the block. Items are kept
 * once per sourceId across pages (crawl-tally.ts).
 */
import type { Logger } from '../logging/logger.js';
import type { CrawlJobPayload, CrawlResultPayload } from '../queues/payloads/crawl.js';
import type { BrowserManager, PageLease } from './browser-manager.js';
import type { CrawlMetrics } from './crawl-metrics.js';
import { CrawlTally, type CrawlReporting } from './crawl-tally.js';
import { fetchPage, type FetchPageOutcome } from './fetch-page.js';
import { decidePage, watchdogError, type PageDecision, type PageHappening, type PageRef } from './page-outcome.js';
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

/** One page's fetch: what happened, through which proxy, how long it took. */
interface PageRun {
  at: PageRef;
  proxy: string;
  durationMs: number;
  happened: PageHappening;
  outcome?: FetchPageOutcome;
}

export async function crawlTask(deps: CrawlDeps, task: CrawlJobPayload, logger: Logger, reporting: CrawlReporting = {}): Promise<CrawlResultPayload> {
  const tally = new CrawlTally(task, reporting);
  const watchdog = new AbortController();
  const timer = setTimeout(() => watchdog.abort(), deps.settings.taskTimeoutMs);
  const plan: [ItemStatus, number][] = [
    ['on_sale', task.pagesOnSale],
    ['sold', task.pagesSold],
  ];
  try {
    for (const [status, pages] of plan) {
      for (let page = 1; page <= pages; page++) {
        // 1. The watchdog.
        if (watchdog.signal.aborted) throw watchdogError(deps.settings);
        // 2. The page, in a fresh tab through the breaker's proxy.
        const run = await fetchInTab(deps, { status, page }, tally, task.keyword, watchdog.signal);
        // 3. What that means.
        const decision = decidePage(run.at, run.happened, deps.settings);
        // 4. Recorded (a block or a failed attempt is thrown from here).
        await record(deps, tally, run, decision, logger);
        if (decision.kind === 'crawled' && decision.endsStatus) break;
      }
    }
  } finally {
    clearTimeout(timer);
  }
  // 5. The result.
  return tally.result();
}

/** Step 2: opens a tab through the breaker's proxy, fetches the page in it, and closes the tab. */
async function fetchInTab(deps: CrawlDeps, at: PageRef, tally: CrawlTally, keyword: string, signal: AbortSignal): Promise<PageRun> {
  const { settings } = deps;
  const proxy = await deps.breaker.current();
  const via = proxy?.label ?? 'direct';
  let lease: PageLease;
  try {
    lease = await deps.browsers.openPage(proxy);
  } catch (error) {
    return { at, proxy: via, durationMs: 0, happened: { kind: 'no_browser', error } };
  }
  const started = performance.now();
  const humanize = settings.humanize && tally.firstPage;
  tally.tried();
  try {
    const outcome = await fetchPage({
      page: lease.page,
      adapter: deps.adapter,
      url: deps.adapter.searchUrl(keyword, at.status, at.page),
      status: at.status,
      humanize,
      limit: settings.maxItemsPerPage,
      pageTimeoutMs: settings.pageTimeoutMs,
      networkIdleMs: settings.networkIdleMs,
      scrollDelayMs: settings.scrollDelayMs,
      signal,
    });
    const happened: PageHappening = { kind: 'crawled', items: outcome.items.length, noMoreResults: outcome.noMoreResults };
    return { at, proxy: via, durationMs: performance.now() - started, happened, outcome };
  } catch (error) {
    const happened: PageHappening = {
      kind: 'failed',
      error,
      browserLost: lease.browserLost(),
      drainTimedOut: lease.drainTimedOut(),
      watchdogFired: signal.aborted,
    };
    return { at, proxy: via, durationMs: performance.now() - started, happened };
  } finally {
    await lease.release();
  }
}

/** Step 4: carries out the decision: the tally, metrics, the log, the job's progress, the proxy breaker. */
async function record(deps: CrawlDeps, tally: CrawlTally, run: PageRun, decision: PageDecision, logger: Logger): Promise<void> {
  const { metrics } = deps;
  const { at, proxy, durationMs } = run;
  const { status, page } = at;
  switch (decision.kind) {
    case 'abort':
      throw decision.error;
    case 'crawled': {
      const items = run.outcome!.items;
      tally.crawled(items);
      metrics.pages.inc({ outcome: decision.outcome });
      metrics.pageDuration.observe({ outcome: decision.outcome }, durationMs / 1000);
      metrics.items.inc({ status }, items.length);
      logger.debug({ status, page, items: items.length, scrolls: run.outcome!.scrolls, proxy }, 'page crawled');
      const more = decision.endsStatus ? ' (no more results)' : '';
      await tally.report(proxy, `${status} page ${page}: ${items.length} items${more} in ${Math.round(durationMs)} ms via ${proxy}`);
      await deps.breaker.recordSuccess();
      return;
    }
    case 'failed': {
      const { errorClass, message } = decision;
      tally.failed(decision.error);
      metrics.pages.inc({ outcome: errorClass });
      metrics.pageDuration.observe({ outcome: errorClass }, durationMs / 1000);
      logger.warn({ status, page, errorClass, err: message, proxy }, 'page failed');
      if (decision.proxyFailure) await deps.breaker.recordFailure();
      if (decision.delay) {
        const line = `${status} page ${page} blocked (${message.slice(0, 200)}) via ${proxy}; the crawl is retried in ${decision.delay.retryAfterMs} ms`;
        await tally.report(proxy, line, 1);
        throw decision.delay;
      }
      await tally.report(proxy, `${status} page ${page} failed (${errorClass}: ${message.slice(0, 200)}) via ${proxy}; going on`);
    }
  }
}
