/**
 * Failed logins are counted per user and per client IP in fixed windows; past the limit, the
 * login is refused with 429 until the window ends. A successful login clears the user's count.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

export class LoginRateLimit {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly maxAttempts: number,
    private readonly windowSeconds: number,
  ) {}

  /** Seconds until another attempt is allowed, or 0 when allowed now. */
  async retryAfter(username: string, ip: string): Promise<number> {
    const keys = [this.keys.loginFailuresByUser(username), this.keys.loginFailuresByIp(ip)];
    const counts = await Promise.all(keys.map((k) => this.redis.get(k)));
    const blocked = keys.filter((_, i) => Number(counts[i] ?? 0) >= this.maxAttempts);
    if (!blocked.length) return 0;
    const ttls = await Promise.all(blocked.map((k) => this.redis.ttl(k)));
    return Math.max(1, ...ttls);
  }

  async recordFailure(username: string, ip: string): Promise<void> {
    for (const key of [this.keys.loginFailuresByUser(username), this.keys.loginFailuresByIp(ip)]) {
      const n = await this.redis.incr(key);
      if (n === 1) await this.redis.expire(key, this.windowSeconds);
    }
  }

  async recordSuccess(username: string): Promise<void> {
    await this.redis.del(this.keys.loginFailuresByUser(username));
  }
}
