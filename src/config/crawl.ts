import { bool, int, list, oneOf, setting, str } from './define.js';

/** CRAWL_BASE_URL value that makes the platform serve the fixture marketplace for the crawler role (src/runtime/crawler-role.ts). */
export const EMBEDDED_FIXTURE_URL = 'embedded';

/** The headless-browser crawler (reference: marketplace-crawler.md sections 3 and 7). */
export const crawlSettings = {
  site: setting('CRAWL_SITE', oneOf(['fixture', 'mercari']), 'fixture', 'Site adapter: fixture (local fixture marketplace) or mercari.'),
  baseUrl: setting(
    'CRAWL_BASE_URL',
    str().min(1),
    EMBEDDED_FIXTURE_URL,
    'Marketplace base URL. "embedded": with CRAWL_SITE=fixture the platform serves the fixture marketplace for the crawler role on a free 127.0.0.1 port; with mercari it means https://jp.mercari.com.',
  ),
  chromiumPath: setting('PUPPETEER_EXECUTABLE_PATH', str(), '/usr/bin/chromium', 'System Chromium; puppeteer never downloads a browser.'),
  concurrency: setting(
    'CRAWLER_CONCURRENCY',
    int(1, 64),
    2,
    'Pages open at once per crawler process (= crawl jobs at once; a job crawls its pages one after another).',
  ),
  pagesPerBrowser: setting('CRAWLER_PAGES_PER_BROWSER', int(1), 100, 'Pages a browser serves before it is recycled (drained).'),
  drainTimeoutMs: setting('CRAWLER_DRAIN_TIMEOUT_MS', int(0), 60000, 'How long in-flight pages of a draining browser may finish.'),
  pageTimeoutMs: setting('CRAWLER_PAGE_TIMEOUT_MS', int(1000), 30000, 'Navigation and extraction timeout of one page.'),
  taskTimeoutMs: setting('CRAWLER_TASK_TIMEOUT_MS', int(1000), 600000, 'Watchdog timeout of one crawl task.'),
  maxItemsPerPage: setting('CRAWLER_MAX_ITEMS_PER_PAGE', int(1), 120, 'Items extracted per results page at most.'),
  networkIdleMs: setting(
    'CRAWLER_NETWORK_IDLE_MS',
    int(0),
    1000,
    'After load, wait until the page made no request for this long (bounded by the page timeout).',
  ),
  scrollDelayMs: setting(
    'CRAWLER_SCROLL_DELAY_MS',
    int(0),
    500,
    'Longest wait after each scroll of the virtual list for new rows (the wait ends as soon as the rows change).',
  ),
  humanize: setting('CRAWLER_HUMANIZE', bool(), true, 'Human-like mouse moves and scrolling on the first page of each crawl.'),
  proxyList: setting(
    'PROXY_LIST',
    list(),
    '',
    'Comma-separated proxy URLs (http://[user:pass@]host:port or socks5://host:port) rotated by the circuit breaker; empty = direct.',
  ),
  proxyFailureThreshold: setting('PROXY_FAILURE_THRESHOLD', int(1), 10, 'Consecutive blocked/network/timeout page failures before switching proxy.'),
  proxyCooldownMinutes: setting('PROXY_COOLDOWN_MINUTES', int(0), 30, 'No further switch for this long after one.'),
  proxyHealthCheckTimeoutMs: setting(
    'PROXY_HEALTH_CHECK_TIMEOUT_MS',
    int(100),
    5000,
    'Timeout of the health check of a candidate proxy (a GET of the site through it).',
  ),
  blockedRetryDelayMs: setting('CRAWLER_BLOCKED_RETRY_DELAY_MS', int(0), 300000, 'Delay before a blocked crawl task is tried again.'),
};
