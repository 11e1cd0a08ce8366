/** The IP detail and leaderboard caches (read-through, versioned; see versioned-cache.ts). */
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { IpDetail, LeaderboardEntry, LeaderboardType } from './ip-queries.js';
import { VersionedCache } from './versioned-cache.js';

export class PipelineCaches {
  private readonly cache: VersionedCache;

  constructor(
    redis: RedisClient,
    private readonly keys: Keys,
    ttlSeconds: number,
    logger: Logger,
  ) {
    this.cache = new VersionedCache(redis, ttlSeconds, logger);
  }

  ipDetail(ipId: number, load: () => Promise<IpDetail | null>) {
    return this.cache.read({ key: this.keys.ipDetailCache(ipId), versionKey: this.keys.ipDetailCacheVersion(ipId) }, load);
  }

  leaderboard(type: LeaderboardType, hours: number, load: () => Promise<LeaderboardEntry[]>) {
    return this.cache.read(
      { key: this.keys.leaderboardCache(type, hours), versionKey: this.keys.leaderboardCacheVersion(), indexKey: this.keys.leaderboardCacheIndex() },
      load,
    );
  }

  invalidateIp(ipId: number): Promise<void> {
    return this.cache.invalidate(this.keys.ipDetailCacheVersion(ipId), this.keys.ipDetailCache(ipId));
  }

  invalidateLeaderboards(): Promise<void> {
    return this.cache.invalidate(this.keys.leaderboardCacheVersion(), this.keys.leaderboardCacheIndex(), true);
  }

  /** Step 6 of the pipeline: a processed result changes the IP's detail and every leaderboard. */
  async invalidateAfterResult(ipId: number): Promise<void> {
    await Promise.all([this.invalidateIp(ipId), this.invalidateLeaderboards()]);
  }
}
