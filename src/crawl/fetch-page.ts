/**
 * Fetches one results page (reference 3.4): resource blocking, navigate, wait for load and
 * network idle, block detection, human-like activity on the first page of a crawl, then the
 * virtual-list scroll-and-extract. One deadline (CRAWLER_PAGE_TIMEOUT_MS, or the task's
 * watchdog) covers all of it: when it fires the page is closed, which ends whatever the page
 * was doing, and the fetch fails with a PageTimeoutError.
 */
import type { Page } from 'puppeteer';
import { withTimeout } from '../lib/timeout.js';
import type { CrawledItem } from '../queues/declarations/crawl.js';
import { pageReadyExpression, snapshotScript } from './browser-scripts.js';
import { PageBlockedError, PageHttpError, PageTimeoutError } from './crawl-errors.js';
import { parseRetryAfter } from './detect-block.js';
import { humanize } from './humanize.js';
import { enableResourceBlocking } from './resource-blocking.js';
import { scrollAndExtract } from './scroll-and-extract.js';
import type { ItemStatus, PageSnapshot, SiteAdapter } from './site-adapter.js';

export interface FetchPageInput {
  page: Page;
  adapter: SiteAdapter;
  url: string;
  status: ItemStatus;
  /** Human-like activity before extracting (the first page of a crawl). */
  humanize: boolean;
  limit: number;
  pageTimeoutMs: number;
  networkIdleMs: number;
  scrollDelayMs: number;
  /** The task's watchdog. */
  signal?: AbortSignal;
}

export interface FetchPageOutcome {
  items: CrawledItem[];
  /** The site says there is nothing (more) for this search. */
  noMoreResults: boolean;
  httpStatus: number;
  rowsSeen: number;
  scrolls: number;
}

export async function fetchPage(input: FetchPageInput): Promise<FetchPageOutcome> {
  const { page, pageTimeoutMs, signal } = input;
  const startedAt = Date.now();
  return withTimeout(() => load(input, () => Math.max(1, pageTimeoutMs - (Date.now() - startedAt))), pageTimeoutMs, {
    error: () => new PageTimeoutError(`page took longer than ${pageTimeoutMs} ms`),
    ...(signal ? { signal, abortError: () => new PageTimeoutError('the crawl task timed out (watchdog)') } : {}),
    onExpire: () => void page.close().catch(() => undefined),
  });
}

async function load(input: FetchPageInput, remainingMs: () => number): Promise<FetchPageOutcome> {
  const { page, adapter } = input;
  await enableResourceBlocking(page);
  const response = await page.goto(input.url, { waitUntil: 'load', timeout: remainingMs() });
  const httpStatus = response?.status() ?? 0;
  const retryAfterMs = parseRetryAfter(response?.headers()['retry-after']);
  if (input.networkIdleMs > 0) {
    // a page that keeps polling never goes idle; that is no reason to fail it
    await page.waitForNetworkIdle({ idleTime: input.networkIdleMs, timeout: Math.min(remainingMs(), input.networkIdleMs * 5) }).catch(() => undefined);
  }

  const snapshot = async (): Promise<PageSnapshot> => ({
    httpStatus,
    ...((await page.evaluate(snapshotScript(adapter.selectors))) as Omit<PageSnapshot, 'httpStatus'>),
  });
  let seen = await snapshot();
  const blocked = adapter.detectBlock(seen);
  if (blocked) throw new PageBlockedError(blocked, retryAfterMs);
  if (httpStatus >= 400) throw new PageHttpError(httpStatus);

  if (seen.rowCount === 0 && !seen.noResults) {
    // results are rendered by script on the real site: wait for rows, "no results" or a challenge
    const ready = await page.waitForFunction(pageReadyExpression(adapter.selectors), { timeout: remainingMs() }).then(
      () => true,
      () => false,
    );
    seen = await snapshot();
    const lateBlock = adapter.detectBlock(seen);
    if (lateBlock) throw new PageBlockedError(lateBlock, retryAfterMs);
    if (!ready) throw new PageTimeoutError('no result rows and no "no results" marker appeared');
  }
  if (seen.noResults && seen.rowCount === 0) return { items: [], noMoreResults: true, httpStatus, rowsSeen: 0, scrolls: 0 };

  if (input.humanize) await humanize(page, adapter.selectors.row, Math.max(1000, input.scrollDelayMs));
  const extracted = await scrollAndExtract(page, adapter, input.status, { limit: input.limit, scrollDelayMs: input.scrollDelayMs });
  if (extracted.items.length === 0) {
    throw new Error(`${extracted.rowsSeen} result rows but none could be read as an item (has the page markup changed?)`);
  }
  return { items: extracted.items, noMoreResults: false, httpStatus, rowsSeen: extracted.rowsSeen, scrolls: extracted.scrolls };
}
