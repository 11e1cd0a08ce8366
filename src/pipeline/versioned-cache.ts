/**
 * Read-through caches with invalidation that a slow reader cannot undo (reference:
 * marketplace-crawler.md 7.4: read Redis; on a miss read the DB and write the cache back
 * asynchronously; TTL 10 min; the pipeline invalidates actively).
 *
 * Each cache has a version key in the same hash slot. A reader notes the version with its
 * miss; the asynchronous fill lands only if the version is unchanged, so a fill that read the
 * DB before an invalidation never re-installs the stale value. The miss makes the version key
 * when there is none; invalidation bumps it only when it exists (none: no fill to stop) and
 * deletes the cached values (a leaderboard has one value per type and hours, listed in an
 * index set so one script deletes them all).
 *
 * Redis trouble never fails a read: the value is then loaded from the DB.
 */
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import { RedisScript } from '../redis/script.js';
import { toError } from '../errors.js';

const readScript = RedisScript.load('cache-read', new URL('./cache-read.lua', import.meta.url), {
  keys: ['cache', 'version'],
  args: ['versionTtlSeconds'],
});

const fillScript = RedisScript.load('cache-fill', new URL('./cache-fill.lua', import.meta.url), {
  keys: ['cache', 'version'],
  args: ['seenVersion', 'value', 'ttlSeconds'],
});

const invalidateScript = RedisScript.load('cache-invalidate', new URL('./cache-invalidate.lua', import.meta.url), {
  keys: ['version', 'target'],
  args: ['targetKind', 'versionTtlSeconds'],
});

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
      const [hit, found] = await readScript.run<[number, string]>(
        this.redis,
        { cache: slot.key, version: slot.versionKey },
        { versionTtlSeconds: VERSION_TTL_SECONDS },
      );
      if (hit) return { value: JSON.parse(found) as T, cached: true };
      version = found;
    } catch (err) {
      this.logger.warn({ err: toError(err).message, key: slot.key }, 'cache read failed; reading the database');
      return { value: await load(), cached: false };
    }
    const value = await load();
    const fill = fillScript.run(
      this.redis,
      { cache: slot.key, version: slot.versionKey },
      { seenVersion: version, value: JSON.stringify(value), ttlSeconds: this.ttlSeconds },
      slot.indexKey ? { keys: [slot.indexKey] } : {},
    );
    fill.catch((err: Error) => {
      this.logger.warn({ err: err.message, key: slot.key }, 'cache fill failed');
    });
    return { value, cached: false };
  }

  /** Drops one cached value (or every value listed in an index set) and bumps the version. */
  async invalidate(versionKey: string, keyOrIndex: string, isIndex = false): Promise<void> {
    await invalidateScript.run(
      this.redis,
      { version: versionKey, target: keyOrIndex },
      { targetKind: isIndex ? 'index' : 'key', versionTtlSeconds: VERSION_TTL_SECONDS },
    );
  }
}
