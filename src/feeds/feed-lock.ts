/**
 * The per-feed refresh lock (reference: tasklock:feed:{id}): SET NX with the job's id and a TTL
 * longer than the refresh time limit, so a crashed holder cannot block the feed for long.
 * Only the holder releases it. The same job id may take it again (a stalled job handed to
 * another worker, or a retry of the holder), so recovery never waits for the TTL.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';

const acquireScript = new RedisScript(
  'feed-lock-acquire',
  `-- KEYS[1] lock key; ARGV[1] holder (job id), ARGV[2] ttl ms
-- Returns {1, holder} when ARGV[1] holds the lock now, {0, holder} when another job does.
local current = redis.call('GET', KEYS[1])
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, ARGV[1]}
end
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, current}
end
return {0, current}`,
);

const releaseScript = new RedisScript(
  'feed-lock-release',
  `-- KEYS[1] lock key; ARGV[1] holder (job id)
-- Deletes the lock only when ARGV[1] holds it. Returns 1 when released.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`,
);

export class FeedLock {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly ttlMs: number,
  ) {}

  async acquire(feedId: number, holder: string): Promise<{ acquired: boolean; holder: string }> {
    const [ok, current] = await acquireScript.run<[number, string]>(this.redis, [this.keys.feedLock(feedId)], [holder, this.ttlMs]);
    return { acquired: ok === 1, holder: current };
  }

  async release(feedId: number, holder: string): Promise<boolean> {
    return (await releaseScript.run<number>(this.redis, [this.keys.feedLock(feedId)], [holder])) === 1;
  }

  /** The job id holding the lock, or null. */
  holder(feedId: number): Promise<string | null> {
    return this.redis.get(this.keys.feedLock(feedId));
  }
}
