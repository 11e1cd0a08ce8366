/**
 * The login rate limit: at most LOGIN_RATE_LIMIT_ADDRESS_MAX failed logins per window from one
 * client address, whatever the user names (unknown ones included), and at most
 * LOGIN_RATE_LIMIT_MAX for one (user name, client address) pair.
 *
 * An attempt is counted before its password is checked, in one atomic step for both counts (one
 * Lua script, one round trip: both keys share the address's hash tag), and only an attempt
 * counted within both limits gets its password checked. So however many attempts arrive at once,
 * from however many processes, one address gets at most the address limit of password checks per
 * window. A successful login takes its attempt back out of both counts, so only failures use the
 * allowance. There is no account-wide lock: failures from one address never lock the account out
 * for another address.
 *
 * An address Redis found at its limit is remembered here until its window ends (at most
 * SPENT_ADDRESSES of them): its further attempts are refused without a round trip, so a flood from
 * one address costs Redis one script per attempt only until the first refusal comes back. (What
 * that may refuse that Redis would not: an attempt after a login that was already under way when
 * the limit was reached succeeded and gave its attempt back; the address waits out its window.)
 *
 * Redis down: fail secure (503, no login) unless AUTH_FAIL_OPEN=true, which counts in this
 * process's memory instead (login-attempt-counts.ts) until Redis answers again.
 */
import { DependencyDownError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import { RedisScript } from '../redis/script.js';
import { LoginAttemptCounts, type AttemptVerdict, type LoginLimits } from './login-attempt-counts.js';

export type { AttemptVerdict, LoginLimits } from './login-attempt-counts.js';

const COUNT_ATTEMPT = RedisScript.load('login-count-attempt', new URL('./login-count-attempt.lua', import.meta.url), {
  keys: ['address', 'pair'],
  args: ['addressMax', 'pairMax', 'windowSeconds'],
});

/** Spent addresses remembered at most; past that the oldest is forgotten (Redis still refuses it). */
export const SPENT_ADDRESSES = 10_000;

const GIVE_BACK = RedisScript.load('login-give-back', new URL('./login-give-back.lua', import.meta.url), { keys: ['address', 'pair'], args: [] });

export class LoginRateLimit {
  private readonly memory: LoginAttemptCounts;
  /** Address → when its window ends (ms), for addresses Redis found at the address limit. */
  private readonly spent = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly limits: LoginLimits,
    private readonly failOpen: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.memory = new LoginAttemptCounts(limits);
  }

  private keysOf(username: string, address: string): { address: string; pair: string } {
    return { address: this.keys.loginAddressAttempts(address), pair: this.keys.loginAttempts(username, address) };
  }

  /** Counts an attempt of `username` from `address` (see client-address.ts); allowed while within both limits. */
  async count(username: string, address: string): Promise<AttemptVerdict> {
    const spentUntil = this.spent.get(address);
    if (spentUntil !== undefined) {
      const left = spentUntil - this.now();
      if (left > 0) return { allowed: false, retryAfterSeconds: Math.ceil(left / 1000) };
      this.spent.delete(address);
    }
    const keys = this.keysOf(username, address);
    try {
      const [counted, wait, addressSpent] = await COUNT_ATTEMPT.run<[number, number, number]>(this.redis, keys, {
        addressMax: this.limits.addressMax,
        pairMax: this.limits.pairMax,
        windowSeconds: this.limits.windowSeconds,
      });
      if (counted === 1) return { allowed: true };
      if (addressSpent === 1) this.remember(address, wait);
      return { allowed: false, retryAfterSeconds: Math.max(1, wait) };
    } catch (err) {
      if (!this.usesMemory(err, 'the login rate limit cannot be checked')) throw err;
      return this.memory.count(keys.address, keys.pair, this.now());
    }
  }

  /** Takes a counted attempt back: a successful login, or an attempt whose password was not checked after all. */
  async giveBack(username: string, address: string): Promise<void> {
    const keys = this.keysOf(username, address);
    try {
      await GIVE_BACK.run(this.redis, keys, {});
    } catch (err) {
      if (!this.usesMemory(err, 'the login rate limit cannot be updated')) throw err;
      this.memory.giveBack(keys.address, keys.pair, this.now());
    }
  }

  private remember(address: string, waitSeconds: number): void {
    if (this.spent.size >= SPENT_ADDRESSES && !this.spent.has(address)) this.spent.delete(this.spent.keys().next().value!);
    this.spent.set(address, this.now() + waitSeconds * 1000);
  }

  /** True when Redis is down and AUTH_FAIL_OPEN lets the memory counts stand in; throws 503 when down and failing secure. */
  private usesMemory(err: unknown, what: string): boolean {
    if (!isRedisUnavailable(err)) return false;
    if (this.failOpen) return true;
    throw new DependencyDownError('redis', `${what} while Redis is unavailable`, { cause: err });
  }
}
