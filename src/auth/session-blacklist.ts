/**
 * The logout blacklist (reference: message-cache-and-auth.md 2.2 and 5.2): a key per logged-out
 * session id, `users:ssid:{ssid}`, living exactly as long as the token would have.
 *
 * When Redis cannot answer, `check` says so ('unavailable'); the caller refuses the token
 * (fail secure, the default) or lets it through when AUTH_FAIL_OPEN=true.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

export type BlacklistState = 'listed' | 'clear' | 'unavailable';

export class SessionBlacklist {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async add(sessionId: string, expiresAtSeconds: number, now = Date.now()): Promise<void> {
    const ttl = Math.max(1, Math.ceil(expiresAtSeconds - now / 1000));
    await this.redis.set(this.keys.blacklistedSession(sessionId), '1', 'EX', ttl);
  }

  async check(sessionId: string): Promise<BlacklistState> {
    try {
      return (await this.redis.exists(this.keys.blacklistedSession(sessionId))) ? 'listed' : 'clear';
    } catch {
      return 'unavailable';
    }
  }
}
