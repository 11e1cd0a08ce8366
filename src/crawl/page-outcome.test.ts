import { describe, expect, it } from 'vitest';
import { BlockedError, RetryableError } from '../errors.js';
import { PageBlockedError, PageHttpError, PageTimeoutError } from './crawl-errors.js';
import { decideCrawlEnd, decidePage, type PageDecision, type PageHappening } from './page-outcome.js';

const settings = { taskTimeoutMs: 600_000, blockedRetryDelayMs: 300_000 };
const at = { status: 'sold', page: 2 } as const;
const failedWith = (error: unknown, more: Partial<Extract<PageHappening, { kind: 'failed' }>> = {}): PageHappening => ({
  kind: 'failed',
  error,
  browserLost: false,
  drainTimedOut: false,
  watchdogFired: false,
  ...more,
});
const as = <K extends PageDecision['kind']>(d: PageDecision, kind: K) => {
  expect(d.kind).toBe(kind);
  return d as Extract<PageDecision, { kind: K }>;
};

describe("what a results page's outcome means for the crawl", () => {
  it('a page with items counts and the crawl goes on; "no more results" counts and ends its status', () => {
    expect(decidePage(at, { kind: 'crawled', items: 120, noMoreResults: false }, settings)).toEqual({ kind: 'crawled', outcome: 'ok', endsStatus: false });
    expect(decidePage(at, { kind: 'crawled', items: 0, noMoreResults: true }, settings)).toEqual({
      kind: 'crawled',
      outcome: 'no_results',
      endsStatus: true,
    });
  });

  it('a timeout or a network failure is recorded, counts against the proxy, and the crawl goes on', () => {
    const timeout = as(decidePage(at, failedWith(new PageTimeoutError('page took longer than 30000 ms')), settings), 'failed');
    expect(timeout).toMatchObject({
      errorClass: 'timeout',
      proxyFailure: true,
      delay: undefined,
      error: { status: 'sold', page: 2, errorClass: 'timeout', message: 'page took longer than 30000 ms' },
    });
    const network = as(decidePage(at, failedWith(new Error('net::ERR_PROXY_CONNECTION_FAILED at http://x/')), settings), 'failed');
    expect(network).toMatchObject({ errorClass: 'network', proxyFailure: true, delay: undefined });
    expect(as(decidePage(at, failedWith(new PageHttpError(502)), settings), 'failed')).toMatchObject({ errorClass: 'network', proxyFailure: true });
  });

  it('a page that cannot be read (changed markup, a 404) is recorded, says nothing about the proxy, and the crawl goes on', () => {
    const parse = as(
      decidePage(at, failedWith(new Error('120 result rows but none could be read as an item (has the page markup changed?)')), settings),
      'failed',
    );
    expect(parse).toMatchObject({ errorClass: 'unknown', proxyFailure: false, delay: undefined });
    expect(as(decidePage(at, failedWith(new PageHttpError(404)), settings), 'failed')).toMatchObject({ errorClass: 'unknown', proxyFailure: false });
  });

  it('a blocked page is recorded, counts against the proxy, and stops the crawl, delayed by the longer of the setting and Retry-After', () => {
    const plain = as(decidePage(at, failedWith(new PageBlockedError('HTTP 403')), settings), 'failed');
    expect(plain).toMatchObject({ errorClass: 'blocked', proxyFailure: true, error: { errorClass: 'blocked', message: 'blocked: HTTP 403' } });
    expect(plain.delay).toBeInstanceOf(BlockedError);
    expect(plain.delay).toMatchObject({ retryAfterMs: 300_000, routine: false, message: 'sold page 2 blocked (blocked: HTTP 403); retrying in 300000 ms' });
    const later = as(decidePage(at, failedWith(new PageBlockedError('HTTP 429', 3_600_000)), settings), 'failed');
    expect(later.delay?.retryAfterMs).toBe(3_600_000);
    const sooner = as(decidePage(at, failedWith(new PageBlockedError('HTTP 429', 30_000)), settings), 'failed');
    expect(sooner.delay?.retryAfterMs).toBe(300_000);
  });

  it('a page failed by the drain timeout of its browser is a timeout, whatever the error says', () => {
    const d = as(decidePage(at, failedWith(new Error('Protocol error: Target closed'), { drainTimedOut: true }), settings), 'failed');
    expect(d).toMatchObject({ errorClass: 'timeout', proxyFailure: true });
  });

  it('no browser, a crash under the page, or the watchdog fail the attempt, recording nothing', () => {
    const noBrowser = as(decidePage(at, { kind: 'no_browser', error: new Error('spawn ENOENT') }, settings), 'abort');
    expect(noBrowser.error).toBeInstanceOf(RetryableError);
    expect(noBrowser.error).toMatchObject({ code: 'browser_unavailable', message: 'no browser for the crawl: spawn ENOENT' });
    // A crash wins over what the page said (a blocked page whose browser died is retried, not delayed).
    const crashed = as(decidePage(at, failedWith(new PageBlockedError('HTTP 403'), { browserLost: true, watchdogFired: true }), settings), 'abort');
    expect(crashed.error).toMatchObject({ code: 'browser_crashed', message: 'Chromium crashed during sold page 2' });
    const watchdog = as(decidePage(at, failedWith(new PageTimeoutError('the crawl task timed out (watchdog)'), { watchdogFired: true }), settings), 'abort');
    expect(watchdog.error).toMatchObject({ code: 'timeout', message: 'the crawl took longer than CRAWLER_TASK_TIMEOUT_MS (600000 ms)' });
  });

  it('keeps 500 characters of a long message in the result, all of it for the log', () => {
    const d = as(decidePage(at, failedWith(new Error(`net::ERR_CONNECTION_RESET ${'x'.repeat(1000)}`)), settings), 'failed');
    expect(d.error.message).toHaveLength(500);
    expect(d.message.length).toBeGreaterThan(1000);
  });

  it('a crawl with no page crawled and some failed fails its attempt; one page crawled, or none tried, is a result', () => {
    const errors = [
      { status: 'on_sale', page: 1, errorClass: 'timeout', message: 'x' },
      { status: 'sold', page: 1, errorClass: 'network', message: 'y' },
    ] as const;
    const end = decideCrawlEnd(0, errors);
    expect(end).toBeInstanceOf(RetryableError);
    expect(end).toMatchObject({ code: 'all_pages_failed', message: 'every page failed: on_sale 1 timeout, sold 1 network' });
    expect(decideCrawlEnd(1, errors)).toBeUndefined();
    expect(decideCrawlEnd(0, [])).toBeUndefined();
  });
});
