/** The crawler's Prometheus metrics (reference 7.5: animetop_crawler_request_duration_seconds and friends). */
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { Metrics } from '../metrics/metrics.js';

export class CrawlMetrics {
  readonly pages: Counter<'outcome'>;
  readonly pageDuration: Histogram<'outcome'>;
  readonly items: Counter<'status'>;
  readonly browserLaunches: Counter<'reason'>;
  readonly browserLaunchDuration: Histogram<'reason'>;
  readonly browserCrashes: Counter;
  readonly browsers: Gauge<'state'>;
  readonly pagesOpen: Gauge;
  readonly proxySwitches: Counter;
  readonly proxyFailures: Gauge;

  constructor(metrics: Metrics) {
    this.pages = metrics.counter('wp_crawler_pages_total', 'Result pages fetched, by outcome (ok, no_results, timeout, blocked, network, unknown).', [
      'outcome',
    ]);
    this.pageDuration = metrics.histogram(
      'wp_crawler_page_duration_seconds',
      'Time to fetch and extract one result page.',
      ['outcome'],
      [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60],
    );
    this.items = metrics.counter('wp_crawler_items_total', 'Items extracted, by status.', ['status']);
    this.browserLaunches = metrics.counter('wp_crawler_browser_launches_total', 'Chromium launches, by reason (start, recycle, proxy, crash).', ['reason']);
    this.browserLaunchDuration = metrics.histogram(
      'wp_crawler_browser_launch_seconds',
      'Time to start Chromium, by reason; pages wait this long at a recycle.',
      ['reason'],
      [0.25, 0.5, 1, 2, 5, 10, 30],
    );
    this.browserCrashes = metrics.counter('wp_crawler_browser_crashes_total', 'Chromium processes that went away without being closed.');
    this.browsers = metrics.gauge('wp_crawler_browsers', 'Chromium processes by state (live, draining).', ['state']);
    this.pagesOpen = metrics.gauge('wp_crawler_pages_open', 'Pages open in this process.');
    this.proxySwitches = metrics.counter('wp_crawler_proxy_switches_total', 'Proxy switches made by this process (circuit breaker).');
    this.proxyFailures = metrics.gauge(
      'wp_crawler_proxy_consecutive_failures',
      'Consecutive blocked/network/timeout failures on the current proxy (as last seen).',
    );
  }
}
