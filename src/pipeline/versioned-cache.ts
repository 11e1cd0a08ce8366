/**
 * Read-through caches with invalidation that a slow reader cannot undo (reference:
 * marketplace-crawler.md 7.4: read Redis; on a miss read the DB and write the cache back
 * asynchronously; TTL 10 min; the pipeline invalidates actively).
 *
 * Each cache has a version key in the same hash slot. A reader notes the version with its
 * miss; the asynchronous fill lands only if the version is unchanged, so a fill that read the
 * DB before an invalidation never re-installs the stale value. Invalidation bumps the version
 * and deletes the cached values (a leaderboard has one value per type and hours, listed in an
 * index set so one script deletes them all).
 *
 * Redis trouble never fails a read: the value is then loaded from the DB.
 */
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import { RedisScript } from '../redis/script.js';
import { toError } from '../errors.js';

const fillScript = new RedisScript(
  'cache-fill',
  `-- KEYS[1] cache key, KEYS[2] version key, KEYS[3] (optional) index set of filled keys
-- ARGV[1] version seen at the miss, ARGV[2] value, ARGV[3] TTL seconds
-- Returns 1 when stored, 0 when an invalidation came in between
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
if KEYS[3] then
  redis.call('SADD', KEYS[3], KEYS[1])
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
return 1`,
);

const invalidateScript = new RedisScript(
  'cache-invalidate',
  `-- KEYS[1] version key, KEYS[2] cache key or index set, ARGV[1] 'index' when KEYS[2] is an index set
-- ARGV[2] version TTL seconds
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
if ARGV[1] == 'index' then
  local members = redis.call('SMEMBERS', KEYS[2])
  for i = 1, #members, 500 do
    redis.call('DEL', unpack(members, i, math.min(i + 499, #members)))
  end
end
redis.call('DEL', KEYS[2])
return 1`,
);

/** Version keys outlive any plausible DB read by far; they expire so idle IPs leave no keys. */
const VERSION_TTL_SECONDS = 86_400;

export interface CacheSlot {
  key: string;
  versionKey: string;
  /** Set listing the filled keys of a family (leaderboards). */
  indexKey?: string;
}

export class VersionedCache {
  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
    private readonly logger: Logger,
  ) {}

  /** The cached value, or the loaded one (then written back in the background). */
  async read<T>(slot: CacheSlot, load: () => Promise<T>): Promise<{ value: T; cached: boolean }> {
    let version: string;
    try {
      const [cached, v] = await this.redis.mget(slot.key, slot.versionKey);
      if (cached) return { value: JSON.parse(cached) as T, cached: true };
      version = v ?? '0';
    } catch (err) {
      this.logger.warn({ err: toError(err).message, key: slot.key }, 'cache read failed; reading the database');
      return { value: await load(), cached: false };
    }
    const value = await load();
    const keys = slot.indexKey ? [slot.key, slot.versionKey, slot.indexKey] : [slot.key, slot.versionKey];
    fillScript.run(this.redis, keys, [version, JSON.stringify(value), this.ttlSeconds]).catch((err: Error) => {
      this.logger.warn({ err: err.message, key: slot.key }, 'cache fill failed');
    });
    return { value, cached: false };
  }

  /** Drops one cached value (or every value listed in an index set) and bumps the version. */
  async invalidate(versionKey: string, keyOrIndex: string, isIndex = false): Promise<void> {
    await invalidateScript.run(this.redis, [versionKey, keyOrIndex], [isIndex ? 'index' : 'key', VERSION_TTL_SECONDS]);
  }
}
