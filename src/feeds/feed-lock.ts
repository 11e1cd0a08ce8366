/**
 * The per-feed refresh lock (reference: tasklock:feed:{id}): SET NX with the job's id and a TTL
 * longer than the refresh time limit, so a crashed holder cannot block the feed for long.
 * Only the holder releases it. The same job id may take it again (a stalled job handed to
 * another worker, or a retry of the holder), so recovery never waits for the TTL.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import { deleteIfEquals } from '../redis/delete-if-equals.js';

const acquireScript = RedisScript.load('feed-lock-acquire', new URL('./feed-lock-acquire.lua', import.meta.url), { keys: ['lock'], args: ['holder', 'ttlMs'] });

export class FeedLock {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly ttlMs: number,
  ) {}

  async acquire(feedId: number, holder: string): Promise<{ acquired: boolean; holder: string }> {
    const [ok, current] = await acquireScript.run<[number, string]>(this.redis, { lock: this.keys.feedLock(feedId) }, { holder, ttlMs: this.ttlMs });
    return { acquired: ok === 1, holder: current };
  }

  async release(feedId: number, holder: string): Promise<boolean> {
    return deleteIfEquals(this.redis, this.keys.feedLock(feedId), holder);
  }

  /** The job id holding the lock, or null. */
  holder(feedId: number): Promise<string | null> {
    return this.redis.get(this.keys.feedLock(feedId));
  }
}
