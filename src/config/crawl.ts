import { int, list, oneOf, setting, str } from './define.js';

/** The headless-browser crawler (reference: marketplace-crawler.md sections 3 and 7). */
export const crawlSettings = {
  site: setting('CRAWL_SITE', oneOf(['fixture', 'mercari']), 'fixture', 'Site adapter: fixture (local fixture marketplace) or mercari.'),
  baseUrl: setting('CRAWL_BASE_URL', str(), 'http://127.0.0.1:3900', 'Base URL of the marketplace the adapter builds search URLs on.'),
  chromiumPath: setting('PUPPETEER_EXECUTABLE_PATH', str(), '/usr/bin/chromium', 'System Chromium; puppeteer never downloads a browser.'),
  concurrency: setting('CRAWLER_CONCURRENCY', int(1, 64), 2, 'Pages open at once per crawler process.'),
  pagesPerBrowser: setting('CRAWLER_PAGES_PER_BROWSER', int(1), 100, 'Pages a browser serves before it is recycled (drained).'),
  drainTimeoutMs: setting('CRAWLER_DRAIN_TIMEOUT_MS', int(0), 60000, 'How long in-flight pages of a draining browser may finish.'),
  pageTimeoutMs: setting('CRAWLER_PAGE_TIMEOUT_MS', int(1000), 30000, 'Navigation and extraction timeout of one page.'),
  taskTimeoutMs: setting('CRAWLER_TASK_TIMEOUT_MS', int(1000), 600000, 'Watchdog timeout of one crawl task.'),
  maxItemsPerPage: setting('CRAWLER_MAX_ITEMS_PER_PAGE', int(1), 120, 'Items extracted per results page at most.'),
  proxyList: setting('PROXY_LIST', list(), '', 'Comma-separated proxy URLs rotated by the circuit breaker; empty = direct.'),
  proxyFailureThreshold: setting('PROXY_FAILURE_THRESHOLD', int(1), 10, 'Consecutive blocked/network failures before switching proxy.'),
  proxyCooldownMinutes: setting('PROXY_COOLDOWN_MINUTES', int(0), 30, 'No further switch for this long after one.'),
  blockedRetryDelayMs: setting('CRAWLER_BLOCKED_RETRY_DELAY_MS', int(0), 300000, 'Delay before a blocked crawl task is tried again.'),
};
