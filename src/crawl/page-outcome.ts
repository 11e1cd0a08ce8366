/**
 * What one results page's outcome means for the crawl: the decision table of the crawl task
 * (crawl-task.ts carries it out). Pure: no I/O, no clock.
 *
 * | what happened                              | the page              | proxy breaker | the crawl                                  |
 * |--------------------------------------------|-----------------------|---------------|--------------------------------------------|
 * | items read                                 | counted, items kept   | success       | next page                                  |
 * | "no more results"                          | counted               | success       | next status (the rest of this one skipped) |
 * | timeout, network (classify-error.ts)       | recorded in `errors`  | failure       | next page                                  |
 * | unknown: the page cannot be read (changed  | recorded in `errors`  | —             | next page                                  |
 * | markup, no item in its rows), a 4xx        |                       |               |                                            |
 * | blocked (403, 429, CAPTCHA)                | recorded in `errors`  | failure       | stops, delayed (BlockedError, no attempt   |
 * |                                            |                       |               | spent) by CRAWLER_BLOCKED_RETRY_DELAY_MS,  |
 * |                                            |                       |               | or the site's Retry-After when longer      |
 * | no browser for the page                    | —                     | —             | the attempt fails (RetryableError)         |
 * | Chromium crashed under the page            | —                     | —             | the attempt fails (RetryableError)         |
 * | the watchdog (CRAWLER_TASK_TIMEOUT_MS)     | —                     | —             | the attempt fails (RetryableError)         |
 * | the crawl ended with no page crawled and   |                       |               | the attempt fails (RetryableError) rather  |
 * | at least one failed                        |                       |               | than publish a result missing its items    |
 *
 * A page that failed because the browser drained under it (its browser recycled, the drain
 * timeout closed it) is a timeout. The breaker's failures switch the proxy (proxy-breaker.ts).
 */
import { BlockedError, RetryableError, toError } from '../errors.js';
import type { CrawlPageError } from '../queues/payloads/crawl.js';
import { classifyError, countsTowardsProxyBreaker, type CrawlErrorClass } from './classify-error.js';
import { PageBlockedError } from './crawl-errors.js';
import type { ItemStatus } from './site-adapter.js';

/** Which page of the crawl. */
export interface PageRef {
  status: ItemStatus;
  page: number;
}

/** What happened to one results page. */
export type PageHappening =
  | { kind: 'no_browser'; error: unknown }
  | { kind: 'crawled'; items: number; noMoreResults: boolean }
  | {
      kind: 'failed';
      error: unknown;
      /** The browser under the page crashed (not closed by us). */
      browserLost: boolean;
      /** The drain timeout closed the browser under the page. */
      drainTimedOut: boolean;
      /** The task's watchdog had fired. */
      watchdogFired: boolean;
    };

export type PageDecision =
  /** The attempt fails at once; nothing of this page is recorded. */
  | { kind: 'abort'; error: RetryableError }
  /** The page counts; `endsStatus`: there is nothing more for this status. */
  | { kind: 'crawled'; outcome: 'ok' | 'no_results'; endsStatus: boolean }
  | {
      kind: 'failed';
      errorClass: CrawlErrorClass;
      /** The whole message, for the log. */
      message: string;
      /** The entry in the result's `errors`. */
      error: CrawlPageError;
      /** The failure counts towards the proxy breaker (which switches proxies). */
      proxyFailure: boolean;
      /** Set for a block: the crawl stops and is delayed by this. */
      delay: BlockedError | undefined;
    };

export interface OutcomeSettings {
  taskTimeoutMs: number;
  blockedRetryDelayMs: number;
}

export function decidePage(at: PageRef, happened: PageHappening, settings: OutcomeSettings): PageDecision {
  const { status, page } = at;
  switch (happened.kind) {
    case 'no_browser':
      return {
        kind: 'abort',
        error: new RetryableError(`no browser for the crawl: ${toError(happened.error).message}`, 'browser_unavailable', { cause: happened.error }),
      };
    case 'crawled':
      return { kind: 'crawled', outcome: happened.noMoreResults ? 'no_results' : 'ok', endsStatus: happened.noMoreResults };
    case 'failed':
      break;
  }
  const { error } = happened;
  if (happened.browserLost)
    return { kind: 'abort', error: new RetryableError(`Chromium crashed during ${status} page ${page}`, 'browser_crashed', { cause: error }) };
  if (happened.watchdogFired) return { kind: 'abort', error: watchdogError(settings) };
  const errorClass = happened.drainTimedOut ? 'timeout' : classifyError(error);
  const message = toError(error).message;
  const blocked = errorClass === 'blocked';
  const retryAfter = blocked ? Math.max(settings.blockedRetryDelayMs, error instanceof PageBlockedError ? (error.retryAfterMs ?? 0) : 0) : 0;
  return {
    kind: 'failed',
    errorClass,
    message,
    error: { status, page, errorClass, message: message.slice(0, 500) },
    proxyFailure: countsTowardsProxyBreaker(errorClass),
    delay: blocked ? new BlockedError(`${status} page ${page} blocked (${message}); retrying in ${retryAfter} ms`, retryAfter) : undefined,
  };
}

/** The attempt's end: a RetryableError when no page was crawled and some failed, else nothing. */
export function decideCrawlEnd(pagesCrawled: number, errors: readonly CrawlPageError[]): RetryableError | undefined {
  if (pagesCrawled > 0 || errors.length === 0) return undefined;
  return new RetryableError(`every page failed: ${errors.map((e) => `${e.status} ${e.page} ${e.errorClass}`).join(', ')}`, 'all_pages_failed');
}

/** The watchdog fired: the attempt fails (checked before each page, and when a page fails under it). */
export function watchdogError(settings: Pick<OutcomeSettings, 'taskTimeoutMs'>): RetryableError {
  return new RetryableError(`the crawl took longer than CRAWLER_TASK_TIMEOUT_MS (${settings.taskTimeoutMs} ms)`, 'timeout');
}
