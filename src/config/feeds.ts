import { int, setting, str } from './define.js';

/** Feed refresh (reference: feed-refresh.md). */
export const feedSettings = {
  defaultIntervalMinutes: setting('FEED_DEFAULT_INTERVAL_MINUTES', int(1, 1440), 30, 'Refresh interval of a new feed.'),
  lockTtlSeconds: setting('FEED_LOCK_TTL_SECONDS', int(1), 180, 'Per-feed refresh lock; longer than the time limit.'),
  timeLimitSeconds: setting('FEED_TIME_LIMIT_SECONDS', int(1), 120, 'Hard limit of one refresh.'),
  domainMinIntervalMs: setting('FEED_DOMAIN_MIN_INTERVAL_MS', int(0), 1000, 'Minimum spacing between requests to one domain, across all workers.'),
  fetchTimeoutMs: setting('FEED_FETCH_TIMEOUT_MS', int(100), 30000, 'Timeout of one feed request.'),
  maxBytes: setting('FEED_MAX_BYTES', int(1024), 10485760, 'Largest feed body accepted.'),
  maxRedirects: setting('FEED_MAX_REDIRECTS', int(0, 20), 5, 'Redirects followed per request.'),
  userAgent: setting('FEED_USER_AGENT', str(), 'Mozilla/5.0 (compatible; worker-platform-feeds/0.1; +https://example.invalid/bot)', 'User-Agent of feed requests.'),
  maxBackoffMinutes: setting('FEED_MAX_BACKOFF_MINUTES', int(1), 1440, 'Upper bound of the failure backoff of periodic refreshes.'),
  concurrency: setting('FEED_WORKER_CONCURRENCY', int(1, 1000), 20, 'Refreshes at once per feeds worker process.'),
  resultTtlSeconds: setting('FEED_RESULT_TTL_SECONDS', int(60), 86400, 'How long refresh results stay readable via /api/tasks.'),
};
