import { int, setting } from './define.js';

/** Session message cache (reference: message-cache-and-auth.md 2.1, 3, 4). */
export const messageSettings = {
  cacheMaxLen: setting('MESSAGE_CACHE_MAX_LEN', int(1), 200, 'Messages kept per session in the cache (LTRIM).'),
  cacheTtlSeconds: setting('MESSAGE_CACHE_TTL_SECONDS', int(1), 86400, 'TTL of a session\'s cached messages, renewed on write.'),
  maxContentBytes: setting('MESSAGE_MAX_CONTENT_BYTES', int(1), 65536, 'Largest message content.'),
  persistBatch: setting('MESSAGE_PERSIST_BATCH', int(1), 500, 'Messages written to the DB per statement.'),
  redisPoolSize: setting('MESSAGE_REDIS_POOL_SIZE', int(1, 64), 1, 'Redis connections the message cache spreads its commands over.'),
  redisTimeoutMs: setting('MESSAGE_REDIS_TIMEOUT_MS', int(10), 500, 'Cache command timeout before the DB path is taken.'),
};
