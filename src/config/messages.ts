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
  cacheTtlSeconds: setting('MESSAGE_CACHE_TTL_SECONDS', int(1), 86400, 'TTL of a session\'s cached messages, renewed on write.'),
  maxContentBytes: setting('MESSAGE_MAX_CONTENT_BYTES', int(1), 65536, 'Largest message content (UTF-8 bytes).'),
  persistBatch: setting('MESSAGE_PERSIST_BATCH', int(1, 5000), 500, 'Messages per persist job and per INSERT statement.'),
  persistJobMaxBytes: setting('MESSAGE_PERSIST_JOB_MAX_BYTES', int(1024), 1048576, 'Content bytes per persist job (a job holds fewer messages when they are large).'),
  persistConcurrency: setting('MESSAGE_PERSIST_CONCURRENCY', int(1, 1000), 64, 'Persist jobs a worker holds at once; their messages are written together.'),
  persistParallel: setting('MESSAGE_PERSIST_PARALLEL', int(1, 64), 2, 'INSERT statements a process runs at once (persist worker and direct writes).'),
  redisPoolSize: setting('MESSAGE_REDIS_POOL_SIZE', int(1, 64), 1, 'Redis connections the message cache spreads sessions over (reference pool_size).'),
  redisConnectTimeoutMs: setting('MESSAGE_REDIS_CONNECT_TIMEOUT_MS', int(100), 3000, 'Connect timeout of the cache connections (reference dial_timeout_ms).'),
  redisTimeoutMs: setting('MESSAGE_REDIS_TIMEOUT_MS', int(10), 500, 'Cache command and enqueue timeout before the DB path is taken (reference read/write_timeout_ms).'),
  repairIntervalMs: setting('MESSAGE_CACHE_REPAIR_INTERVAL_MS', int(50), 1000, 'How often a session whose cache write failed is merged with the DB again.'),
};
