/**
 * Failures of one results page, and of the browser under it.
 *
 * A page failure is recorded in the crawl result and the crawl goes on with the next page
 * (classed by classify-error.ts). A browser failure (it crashed, or could not be launched)
 * fails the crawl attempt instead, so BullMQ retries the whole task on a fresh browser:
 * a half-crawled result would look like items that disappeared.
 */

/** The site refused us: HTTP 403/429, a CAPTCHA or a challenge page. */
export class PageBlockedError extends Error {
  override readonly name = 'PageBlockedError';
  constructor(
    readonly reason: string,
    /** From a Retry-After header, when the site sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(`blocked: ${reason}`);
  }
}

/** The site (or a proxy in front of it) answered with an HTTP error other than a block. */
export class PageHttpError extends Error {
  override readonly name = 'PageHttpError';
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

/** The page did not finish within CRAWLER_PAGE_TIMEOUT_MS (or the task watchdog fired). */
export class PageTimeoutError extends Error {
  override readonly name = 'PageTimeoutError';
}

/** The browser serving the page crashed or could not be started. */
export class BrowserUnavailableError extends Error {
  override readonly name = 'BrowserUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
