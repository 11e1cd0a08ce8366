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
  userAgent: setting(
    'FEED_USER_AGENT',
    str(),
    'Mozilla/5.0 (compatible; worker-platform-feeds/0.1; +https://example.invalid/bot)',
    'User-Agent of feed requests.',
  ),
  maxBackoffMinutes: setting('FEED_MAX_BACKOFF_MINUTES', int(1), 1440, 'Upper bound of the failure backoff of periodic refreshes.'),
  concurrency: setting('FEED_WORKER_CONCURRENCY', int(1, 1000), 20, 'Refreshes at once per feeds worker process.'),
  resultTtlSeconds: setting('FEED_RESULT_TTL_SECONDS', int(60), 86400, 'How long refresh results stay readable via /api/tasks.'),
  attempts: setting('FEED_ATTEMPTS', int(1, 20), 3, 'Attempts of one refresh on retryable failures (network, timeout, 5xx, 429) before it counts as failed.'),
  retryDelayMs: setting(
    'FEED_RETRY_DELAY_MS',
    int(0),
    30000,
    'First retry delay of a failed refresh attempt; doubles each attempt (Retry-After wins when longer).',
  ),
  upsertBatchSize: setting('FEED_UPSERT_BATCH_SIZE', int(1, 5000), 500, 'Articles per INSERT ... ON CONFLICT statement.'),
  sanitizeBatchSize: setting(
    'FEED_SANITIZE_BATCH_SIZE',
    int(1, 5000),
    500,
    "Articles per batch of the leader's job that sanitizes articles stored by an older sanitizer.",
  ),
  maxPerUser: setting('FEEDS_MAX_PER_USER', int(1), 200, 'Feeds one user may subscribe to (409 feed_limit_reached beyond).'),
  articlesKeepPerFeed: setting(
    'ARTICLES_KEEP_PER_FEED',
    int(1),
    1000,
    'Articles kept per feed: the newest (by published date, then id); the feeds-trim-articles maintenance task deletes older ones.',
  ),
  maxItemsPerDocument: setting(
    'FEED_MAX_ITEMS_PER_DOCUMENT',
    int(1),
    1000,
    'Items of one feed document read and stored per refresh (the first ones in the document; the rest are not read, only counted as truncatedItems).',
  ),
  housekeepingIntervalSeconds: setting(
    'FEED_HOUSEKEEPING_INTERVAL_SECONDS',
    int(1),
    3600,
    'How often the feeds-trim-articles maintenance task trims articles past ARTICLES_KEEP_PER_FEED.',
  ),
  reconcileIntervalSeconds: setting(
    'FEED_RECONCILE_INTERVAL_SECONDS',
    int(0),
    600,
    'How often the leader checks that every feed has its one pending periodic refresh and repairs a lost one (0 = only at start).',
  ),
};
