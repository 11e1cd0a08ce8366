/**
 * The login rate limit: at most LOGIN_RATE_LIMIT_MAX failed logins per window for one (user name,
 * client address) pair.
 *
 * An attempt is counted before its password is checked, in one atomic step (INCR, and the
 * window's expiry on the first attempt), and only attempts counted within the limit get their
 * password checked. So however many attempts arrive at once, at most the limit of them reach the
 * password check. A successful login takes its own attempt back out, so only failures use the
 * allowance. The count is per address: failures from one address never lock the account out for
 * another address (there is no account-wide lock).
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';

const COUNT_ATTEMPT = RedisScript.load('login-count-attempt', new URL('./login-count-attempt.lua', import.meta.url), {
  keys: ['attempts'],
  args: ['windowSeconds'],
});

const GIVE_BACK = RedisScript.load('login-give-back', new URL('./login-give-back.lua', import.meta.url), { keys: ['attempts'], args: [] });

export type AttemptVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class LoginRateLimit {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly maxFailures: number,
    private readonly windowSeconds: number,
  ) {}

  /** Counts an attempt of `username` from `address` (see client-address.ts); allowed while within the limit. */
  async count(username: string, address: string): Promise<AttemptVerdict> {
    const [n, ttl] = await COUNT_ATTEMPT.run<[number, number]>(
      this.redis,
      { attempts: this.keys.loginAttempts(username, address) },
      { windowSeconds: this.windowSeconds },
    );
    return n <= this.maxFailures ? { allowed: true } : { allowed: false, retryAfterSeconds: Math.max(1, ttl) };
  }

  /** A successful login: its attempt does not count against the limit. */
  async succeeded(username: string, address: string): Promise<void> {
    await GIVE_BACK.run(this.redis, { attempts: this.keys.loginAttempts(username, address) }, {});
  }
}
