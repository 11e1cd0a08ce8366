import { int, setting } from './define.js';

/**
 * Session message cache (reference: message-cache-and-auth.md 2.1, 3, 4, 9).
 *
 * The reference's go-redis pool (pool_size 50, min_idle_conns 10, dial/read/write timeouts 3000 ms)
 * maps to ioredis like this: every connection pipelines any number of concurrent commands, so the
 * pool is a few connections (a session always uses the same one, which keeps its appends in
 * order); idle connections are never dropped, so min_idle_conns has no counterpart; the dial
 * timeout is the connect timeout and the read/write timeouts are one command timeout, shorter
 * than the reference's so that a stuck Redis turns into the DB path quickly.
 */
export const messageSettings = {
  cacheMaxLen: setting('MESSAGE_CACHE_MAX_LEN', int(1), 200, 'Messages kept per session in the cache (LTRIM).'),
  cacheTtlSeconds: setting('MESSAGE_CACHE_TTL_SECONDS', int(1), 86400, "TTL of a session's cached messages, renewed on write."),
  maxContentBytes: setting('MESSAGE_MAX_CONTENT_BYTES', int(1), 65536, 'Largest message content (UTF-8 bytes).'),
  persistBatch: setting('MESSAGE_PERSIST_BATCH', int(1, 5000), 500, 'Messages the persist worker takes from a buffer and writes per INSERT statement.'),
  persistShards: setting('MESSAGE_PERSIST_SHARDS', int(1, 256), 4, 'Persist buffers (Redis lists) sessions are spread over; each drains one batch at a time.'),
  persistTriggerMs: setting(
    'MESSAGE_PERSIST_TRIGGER_MS',
    int(0, 10000),
    25,
    'Least time between two drain jobs an API process queues for one buffer; appends in between get one drain at the end.',
  ),
  persistSweepMs: setting('MESSAGE_PERSIST_SWEEP_MS', int(100), 5000, 'How often every persist buffer is drained regardless of triggers (safety net).'),
  persistLockMs: setting('MESSAGE_PERSIST_LOCK_MS', int(1000), 30000, "Lease of a drain on its buffer; a crashed drain's batch is taken again after it."),
  persistParallel: setting(
    'MESSAGE_PERSIST_PARALLEL',
    int(1, 64),
    2,
    'INSERT statements an API process runs at once when it writes straight to the DB (Redis down).',
  ),
  redisPoolSize: setting('MESSAGE_REDIS_POOL_SIZE', int(1, 64), 1, 'Redis connections the message cache spreads sessions over (reference pool_size).'),
  redisConnectTimeoutMs: setting('MESSAGE_REDIS_CONNECT_TIMEOUT_MS', int(100), 3000, 'Connect timeout of the cache connections (reference dial_timeout_ms).'),
  redisTimeoutMs: setting(
    'MESSAGE_REDIS_TIMEOUT_MS',
    int(10),
    500,
    'Cache command and enqueue timeout before the DB path is taken (reference read/write_timeout_ms).',
  ),
  repairIntervalMs: setting('MESSAGE_CACHE_REPAIR_INTERVAL_MS', int(50), 1000, 'How often a session whose cache write failed is merged with the DB again.'),
};
