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

const COUNT_ATTEMPT = new RedisScript(
  'login-count-attempt',
  `-- KEYS[1] the attempts of one (user name, address) in the current window
-- ARGV[1] window in seconds
-- Returns {attempts including this one, seconds left in the window}.
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`,
);

const GIVE_BACK = new RedisScript(
  'login-give-back',
  `-- KEYS[1] the attempts of one (user name, address)
-- Takes one attempt back (a successful login); never below zero.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return n`,
);

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
    const [n, ttl] = await COUNT_ATTEMPT.run<[number, number]>(this.redis, [this.keys.loginAttempts(username, address)], [this.windowSeconds]);
    return n <= this.maxFailures ? { allowed: true } : { allowed: false, retryAfterSeconds: Math.max(1, ttl) };
  }

  /** A successful login: its attempt does not count against the limit. */
  async succeeded(username: string, address: string): Promise<void> {
    await GIVE_BACK.run(this.redis, [this.keys.loginAttempts(username, address)]);
  }
}
